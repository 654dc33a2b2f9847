"""Which server project a repository's segments go to.

In order: a pinned slug (`SESSIONLEDGER_PROJECT` at capture time, the repository's own pin
that `init --project` writes, then the `project` key), the `repos` map written by `init`, a
cache of earlier lookups, and finally the server itself
(`GET /api/v1/projects?repo=<remote>`), whose answer is cached so later uploads ask nothing.
"""

from __future__ import annotations

from sessionledger import gitmeta, state
from sessionledger.api import Client
from sessionledger.config import Config
from sessionledger.core import remotes


class ProjectUnknown(Exception):
    """No project can be found for a repository; the message says what to do."""


def for_remote(remote: str | None, config: Config, client: Client, *, pinned: str | None = None) -> str:
    if pinned or config["project"]:
        return str(pinned or config["project"])
    if not remote:
        raise ProjectUnknown(
            "the repository has no git remote and no pinned project: run `sessionledger init --project SLUG` in it"
        )
    key = remotes.normalise_remote(remote)
    known = (config["repos"] or {}).get(key) or state.load()["projects"].get(key)
    if known:
        return str(known)
    return _ask_server(key, remote, client)


def _ask_server(key: str, remote: str, client: Client) -> str:
    found = client.get("/projects", {"repo": remote}) or []
    slugs = [p["slug"] for p in found if isinstance(p, dict) and p.get("slug")]
    if len(slugs) != 1:
        problem = "no project of yours" if not slugs else f"several projects ({', '.join(slugs)})"
        raise ProjectUnknown(f"{problem} on {client.server} for {key}: run `sessionledger init --project SLUG`")
    with state.transaction() as txn:
        txn.projects[key] = slugs[0]
    return slugs[0]


def repo_pin(repo_dir: str | None) -> str | None:
    """The project `init --project` pinned in a repository's git config, if any."""
    import os

    from sessionledger.config import ConfigError, read_repo

    if not repo_dir or not os.path.isdir(repo_dir):
        return None
    try:
        return read_repo(repo_dir).get("project") or None
    except ConfigError:
        return None


def pinned_for(repo_dir: str | None, config: Config) -> tuple[str | None, str]:
    """(slug, where it comes from) when a project is pinned for this repository; no server asked."""
    if str(config.sources.get("project", "")).startswith("SESSIONLEDGER_") and config["project"]:
        return str(config["project"]), str(config.sources["project"])
    pinned = repo_pin(repo_dir)
    if pinned:
        return pinned, "pinned in this repository's git config"
    if config["project"]:
        source = config.sources.get("project", "file")
        return str(config["project"]), "`project` in the config file" if source == "file" else source
    return None, ""


def for_directory(cwd: str, config: Config, client: Client) -> str:
    """The project of the repository around `cwd` (commands such as `list`)."""
    from sessionledger.gitrefs import find_repo

    repo = find_repo(cwd)
    pinned, _ = pinned_for(repo.worktree if repo else None, config)
    if pinned:
        return pinned
    remote = gitmeta.remote_url(repo.worktree) if repo else None
    return for_remote(remote, config, client)

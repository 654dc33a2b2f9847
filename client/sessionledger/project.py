"""Which server project a repository's segments go to.

In order: a pinned slug (`SESSIONLEDGER_PROJECT` at capture time, then the `project` key), the
`repos` map written by `init`, a cache of earlier lookups, and finally the server itself
(`GET /api/v1/projects?repo=<remote>`), whose answer is cached so later uploads ask nothing.
"""

from __future__ import annotations

from sessionledger import gitmeta, state
from sessionledger.api import Client
from sessionledger.config import Config


class ProjectUnknown(Exception):
    """No project can be found for a repository; the message says what to do."""


def for_remote(remote: str | None, config: Config, client: Client, *, pinned: str | None = None) -> str:
    if pinned or config["project"]:
        return str(pinned or config["project"])
    if not remote:
        raise ProjectUnknown("the repository has no git remote: set one, or pin a project with `init --project`")
    key = gitmeta.normalise_remote(remote)
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


def for_directory(cwd: str, config: Config, client: Client) -> str:
    """The project of the repository around `cwd` (commands such as `list`)."""
    if config["project"]:
        return str(config["project"])
    from sessionledger.gitrefs import find_repo

    repo = find_repo(cwd)
    remote = gitmeta.remote_url(repo.worktree) if repo else None
    return for_remote(remote, config, client)

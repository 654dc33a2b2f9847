"""Which project this repository's captures go to, as `init` settles it.

`init --project SLUG` pins the project in the clone's own git config (`sessionledger.project`):
it works without a git remote, follows the repository when it moves, and every worktree of it
shares it. Without `--project` the server is asked for the project of the remote, and the answer
is remembered in the config file (`repos`). Segments that waited for a project are sent at once.
"""

from __future__ import annotations

from sessionledger import config as config_mod
from sessionledger import gitmeta, gitrefs, queue
from sessionledger.api import ApiError
from sessionledger.commands.common import CommandError, client, load_config
from sessionledger.core import remotes


def bind_project(repo: gitrefs.Repo, slug: str | None) -> None:
    if slug:
        _pin(repo, slug)
    else:
        _bind_remote(repo)
    _release_blocked()


def _pin(repo: gitrefs.Repo, slug: str) -> None:
    """Pin `slug` unless the server says it has no such project of yours (then refuse: exit 1).
    A server that cannot be asked (offline, slow, not logged in) does not stop the pin: it is
    checked again at upload, and `status` says so."""
    problem = _check_slug(slug)
    if problem and problem.unknown:
        raise CommandError(f"{problem.text}: nothing pinned (check the slug, or ask its admin to add you)")
    try:
        gitmeta.git(repo.worktree, "config", "--local", config_mod.git_name("project"), slug)
    except gitmeta.GitError as exc:
        raise CommandError(f"cannot pin the project in the repository's git config: {exc}") from None
    print(f"This repository → project {slug} (pinned in its git config: {config_mod.git_name('project')}).")
    if problem:
        print(f"  Warning: {problem.text}")


class _SlugProblem:
    def __init__(self, text: str, *, unknown: bool = False) -> None:
        self.text, self.unknown = text, unknown


def _check_slug(slug: str) -> _SlugProblem | None:
    config = load_config()
    if not config.server or not config.token:
        return _SlugProblem("not logged in yet: run `sessionledger login`; captures wait until then")
    try:
        client(config).get(f"/projects/{slug}")
    except ApiError as exc:
        if exc.status == 404:
            return _SlugProblem(f"{config.server} has no project {slug} that you are a member of", unknown=True)
        return _SlugProblem(f"could not check the project: {exc.message}")
    return None


def _bind_remote(repo: gitrefs.Repo) -> None:
    """Remember remote → project in the config so uploads need no lookup."""
    remote = gitmeta.remote_url(repo.worktree)
    pinned = load_config()["project"]
    if not remote:
        if pinned:
            print(f"This repository → project {pinned}.")
        else:
            print("This repository has no git remote: pin its project with `sessionledger init --project SLUG`.")
        return
    key = remotes.normalise_remote(remote)
    slug = _lookup(remote, key)
    if slug:
        config = load_config()
        repos = {**(config_mod.read_file().get("repos") or {}), key: slug}
        config_mod.update_file(repos=repos)
        print(f"{key} → project {slug} on {config.server or '(no server yet)'}")


def _lookup(remote: str, key: str) -> str | None:
    config = load_config()
    if not config.server or not config.token:
        print("Not logged in yet: run `sessionledger login`, then `sessionledger init` again to bind a project.")
        return None
    try:
        found = client(config).get("/projects", {"repo": remote}) or []
    except ApiError as exc:
        print(f"Could not ask {config.server} for the project of {key}: {exc.message}")
        return None
    slugs = [p["slug"] for p in found if isinstance(p, dict)]
    if len(slugs) == 1:
        return slugs[0]
    if not slugs:
        print(f"No project of yours on {config.server} has the repository {key}.")
        print("Ask a project admin to set it (create_project --repo), or run `sessionledger init --project SLUG`.")
    else:
        print(f"Several projects match {key}: {', '.join(slugs)}; choose one with `--project`.")
    return None


def _release_blocked() -> None:
    """Segments blocked for want of a project can go now: start an uploader if there are any."""
    if any(e.status().get("state") == queue.BLOCKED for e in queue.entries()):
        from sessionledger.spawn import start_uploader

        start_uploader()
        print("Segments that waited for a project are being uploaded (`sessionledger status` shows them).")

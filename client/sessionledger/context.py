"""The context digest (docs/design.md §6) as the client asks for it: the current branch and the files in
play, within a character budget. Shared by `sessionledger context`, the SessionStart hook and the
MCP server's `get_context`, so all three ask the same question.

The SessionStart hook reads the digest from a per-repository cache (`cached`) that the uploader
refreshes after each upload (`refresh`), so a session start never waits on the network for it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from sessionledger import gitrefs

if TYPE_CHECKING:  # urllib.request is slow to import: imported where a request is made
    from sessionledger.api import Client

INLINE_LIMIT = 10_000  # Claude Code writes longer additionalContext to a file (docs/claude-code.md §2.4)
ROOM_FOR_NOTES = 1000  # of INLINE_LIMIT, kept for the hook's own notes (a /clear's capture)
SERVER_MIN_BUDGET, SERVER_MAX_BUDGET = 200, 50_000


def current_branch(cwd: str) -> str:
    """The checked-out branch around `cwd`, read from git's files ("" when detached or no repo)."""
    repo = gitrefs.find_repo(cwd)
    if repo is None:
        return ""
    return gitrefs.branch_name(gitrefs.read_head(repo)[1])


def files_in_play(cwd: str) -> list[str]:
    repo = gitrefs.find_repo(cwd)
    if repo is None:
        return []
    from sessionledger.worktree import files_in_play as from_git

    return from_git(repo.worktree)


def clamp_budget(budget: int) -> int:
    return max(SERVER_MIN_BUDGET, min(int(budget), SERVER_MAX_BUDGET))


def fetch(
    api: Client,
    slug: str,
    *,
    branch: str = "",
    files: list[str] | None = None,
    budget: int = 8000,
    prompts: bool = False,
) -> dict:
    """`GET …/context`: {"text", "length", "budget", "sessions": [{id, reason, commit_hash, …}]}.

    `prompts=False` asks for the short digest: titles, commit messages and files only."""
    params = {"branch": branch, "files": ",".join(files or []), "budget": clamp_budget(budget)}
    params["prompts"] = "1" if prompts else "0"
    reply = api.get(f"/projects/{slug}/context", params)
    return reply if isinstance(reply, dict) else {"text": "", "sessions": []}


def for_directory(api: Client, slug: str, cwd: str | None = None, *, budget: int = 8000, prompts: bool = False) -> dict:
    """The digest for the working tree around `cwd`: its branch and its files in play."""
    cwd = cwd or os.getcwd()
    return fetch(api, slug, branch=current_branch(cwd), files=files_in_play(cwd), budget=budget, prompts=prompts)


def cut(text: str, limit: int) -> str:
    """`text` within `limit` characters, cut at a line end when one is near."""
    if len(text) <= limit:
        return text
    marker = "\n[…]"
    head = text[: max(0, limit - len(marker))]
    newline = head.rfind("\n")
    if newline > len(head) // 2:
        head = head[:newline]
    return head + marker


def hook_budget(budget: int) -> int:
    """The digest's budget in SessionStart: `context_budget`, leaving room for the hook's notes."""
    return min(int(budget), INLINE_LIMIT - ROOM_FOR_NOTES)


def cache_path(worktree: str) -> str:
    """The digest cache of the repository at `worktree`: one JSON file, keyed by branch inside."""
    from sessionledger import paths

    name = worktree.strip(os.sep).replace(os.sep, "%")[-180:] or "root"
    return os.path.join(paths.state_dir(), "context", name + ".json")


def cached(cwd: str, budget: int, prompts: bool) -> tuple[str, float] | None:
    """The cached digest for the branch around `cwd` ("" when it had nothing) and when it was fetched
    (epoch seconds); None if never fetched, or fetched for another budget or `prompts` (the settings
    changed since)."""
    repo = gitrefs.find_repo(cwd)
    if repo is None:
        return None
    from sessionledger.fastjson import loads

    try:
        with open(cache_path(repo.worktree), encoding="utf-8") as handle:
            data = loads(handle.read())
    except (OSError, ValueError):
        return None
    entry = data.get(gitrefs.branch_name(gitrefs.read_head(repo)[1])) if isinstance(data, dict) else None
    if not isinstance(entry, dict) or [entry.get("budget"), entry.get("prompts")] != [budget, prompts]:
        return None
    text, fetched = entry.get("text"), entry.get("fetched_at")
    if not isinstance(text, str):
        return None
    return text, float(fetched) if isinstance(fetched, int | float) else 0.0


def store(cwd: str, digest: dict[str, object], *, budget: int, prompts: bool) -> None:
    """Keep `digest` (a `fetch` reply) as the cached one for the branch around `cwd`."""
    repo = gitrefs.find_repo(cwd)
    if repo is None:
        return
    import time

    from sessionledger.fastjson import dumps, loads
    from sessionledger.fsutil import atomic_write

    path = cache_path(repo.worktree)
    try:
        with open(path, encoding="utf-8") as handle:
            data = loads(handle.read())
    except (OSError, ValueError):
        data = {}
    text = str(digest.get("text") or "") if digest.get("sessions") else ""  # a bare header is noise
    branches = data if isinstance(data, dict) else {}
    entry = {"text": text, "budget": budget, "prompts": prompts, "fetched_at": time.time()}
    branches[gitrefs.branch_name(gitrefs.read_head(repo)[1])] = entry
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    atomic_write(path, dumps(branches).encode())


REFRESH_AFTER = 600.0  # seconds: an older cached digest is shown, and renewed in the background
REFRESH_TIMEOUT = 60.0  # seconds the detached refresh gives the server (nobody waits for it)


def refresh_lock(worktree: str) -> str:
    """Held by the detached refresh of one repository's digest: one at a time per repository."""
    return cache_path(worktree)[: -len(".json")] + ".lock"


def refresh_detached(cwd: str) -> None:
    """The SessionStart hook's detached step (`spawn.start_detached`): fetch the digest of the
    repository around `cwd` into the cache, for the next session start. Taken by one process at a
    time; the others return (their start had the cached text, or nothing)."""
    from sessionledger import config, log
    from sessionledger.api import Client
    from sessionledger.fsutil import FileLock
    from sessionledger.project import for_directory

    repo = gitrefs.find_repo(cwd)
    settings = config.load(cwd)
    if repo is None or not settings.server or not settings.token:
        return
    lock = FileLock(refresh_lock(repo.worktree), timeout=0)
    if not lock.acquire():
        return
    try:
        api = Client(settings.server, settings.token, timeout=REFRESH_TIMEOUT)
        slug = for_directory(repo.worktree, settings, api)
        prompts = bool(settings["context_prompts"])
        refresh(api, slug, repo.worktree, budget=int(settings["context_budget"]), prompts=prompts)
        log.info(f"context digest of {repo.worktree} refreshed for the next session start")
    except Exception as exc:  # the cache stays as it was; the next start or upload tries again
        log.warning(f"refreshing the context digest of {repo.worktree} failed: {exc}")
    finally:
        lock.release()


def refresh(api: Client, slug: str, worktree: str, *, budget: int, prompts: bool) -> None:
    """Fetch the digest for the repository at `worktree` (its branch, its files) into the cache."""
    budget = hook_budget(budget)
    digest = for_directory(api, slug, worktree, budget=budget, prompts=prompts)
    store(worktree, digest, budget=budget, prompts=prompts)

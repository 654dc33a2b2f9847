"""The context digest (docs/design.md §6) as the client asks for it: the current branch and the files in
play, within a character budget. Shared by `sessionledger context`, the SessionStart hook and the
MCP server's `get_context`, so all three ask the same question.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from sessionledger import gitrefs

if TYPE_CHECKING:  # urllib.request is slow to import: imported where a request is made
    from sessionledger.api import Client

INLINE_LIMIT = 10_000  # Claude Code writes longer additionalContext to a file (docs/claude-code.md §2.4)
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

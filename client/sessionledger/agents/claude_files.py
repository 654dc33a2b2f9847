"""Claude Code's adapter, writing back: a captured conversation as Claude Code keeps it on
disk — the session file and the files beside it: sub-agent transcripts in the layout they were
captured in, and the large tool outputs under `<session>/tool-results/` (docs/client.md "restore").

References inside the conversation to `…/<old id>/tool-results/…` are pointed at the files
written here (`formats.persisted.relocate`); when the id and the directory are unchanged (a
`restore --same-id` on the machine it came from) every byte stays as captured.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from sessionledger.agents.base import CannotResume
from sessionledger.core.claude_layout import SUFFIX, is_agent_file, project_dir
from sessionledger.core.formats.persisted import DIRECTORY, relocate
from sessionledger.core.formats.resume import close_open_tool_calls, rewrite_for_resume
from sessionledger.fsutil import atomic_write

Rewrite = Callable[[bytes], bytes]


@dataclass
class Written:
    session: str = ""
    files: list[str] = field(default_factory=list)
    closed_calls: int = 0  # tool calls the conversation ended on, answered by a note
    moved_agents: list[str] = field(default_factory=list)  # older-layout agents put in the new layout


def tool_results_dir(cwd: str, session_id: str) -> str:
    return os.path.join(project_dir(cwd), session_id, DIRECTORY)


def finish(data: bytes, old_id: str, cwd: str, session_id: str) -> tuple[bytes, int]:
    """The session file's bytes: tool-result references moved, open tool calls answered."""
    moved = relocate(data, old_id, tool_results_dir(cwd, session_id))
    return close_open_tool_calls(moved)


def write_all(
    fetch: Callable[[str], bytes], listing: dict, *, cwd: str, session_id: str, data: bytes, rewrite: Rewrite
) -> Written:
    """The session file plus every file the agent session has (`fetch(path)` downloads one);
    `rewrite` adapts sub-agent bytes."""
    written = Written(session=write_session(cwd, session_id, data))
    for item in listing.get("files") or []:
        path = str(item.get("path") or "")
        content = fetch(path)
        if item.get("kind") == "subagent":
            written.files.append(_write_agent(cwd, session_id, path, rewrite(content), written))
        elif path.startswith(f"{DIRECTORY}/") and _safe_name(path[len(DIRECTORY) + 1 :]):
            target = os.path.join(tool_results_dir(cwd, session_id), path[len(DIRECTORY) + 1 :])
            atomic_write(target, content, mode=0o600)
            written.files.append(target)
    return written


def write_session(cwd: str, session_id: str, data: bytes) -> str:
    """`<claude dir>/projects/<encoded cwd>/<id>.jsonl` (CLAUDE_CONFIG_DIR honoured)."""
    directory = project_dir(cwd)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    path = os.path.join(directory, session_id + SUFFIX)
    atomic_write(path, data, mode=0o600)
    return path


def subagent_rewriter(session_id: str, old_id: str, cwd: str, cwd_from: str | None) -> Rewrite:
    """Sub-agent lines carry the parent's `sessionId` and `cwd`: moved like the session's."""

    def rewrite(data: bytes) -> bytes:
        data = relocate(data, old_id, tool_results_dir(cwd, session_id))
        return rewrite_for_resume(data, session_id=session_id, cwd_from=cwd_from, cwd_to=cwd)[0]

    return rewrite


def _write_agent(cwd: str, session_id: str, path: str, data: bytes, written: Written) -> str:
    """Where Claude Code of that version kept it; an older-layout file already there with other
    content (the original session's, beside it) is not overwritten: the new layout takes it."""
    name = os.path.basename(path)
    if not is_agent_file(name) or not _safe_name(name):
        raise CannotResume(f"the server listed a sub-agent file with an unexpected name: {path!r}")
    directory = project_dir(cwd)
    legacy = path == name
    target = os.path.join(directory, name) if legacy else os.path.join(directory, session_id, "subagents", name)
    if legacy and os.path.exists(target) and _read(target) != data:
        target = os.path.join(directory, session_id, "subagents", name)
        written.moved_agents.append(name)
    atomic_write(target, data, mode=0o600)
    return target


def _safe_name(name: str) -> bool:
    return bool(name) and name not in (".", "..") and "/" not in name and "\\" not in name and len(name) <= 255


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None

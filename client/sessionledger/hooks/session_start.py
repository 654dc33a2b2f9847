"""SessionStart: give the assistant the context digest of earlier sessions (SPEC §6, §7).

Prints `{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": …}}` for
every source (`startup`, `resume`, `clear`, `compact`, `fork`), at most 10,000 characters so
Claude Code keeps it inline instead of writing it to a file. After a `/clear` it starts with
what the SessionEnd hook captured ("captured N messages as <url>; uncommitted: …").

It must never get in the way of a session starting: no server, no token, the network down or
slow (`context_timeout`, 3 s by default) — the digest is left out and the hook exits 0, printing
nothing when it has nothing to say. `auto_resume_on_start` off prints nothing, except the
uncommitted-work warning that `verify_before_clear` asks for.
"""

from __future__ import annotations

import json
import os
import sys
import time

from sessionledger import clears, config, log
from sessionledger.context import INLINE_LIMIT, cut

EVENT = "SessionStart"
CLEAR_WAIT_FOR_END = 1.0  # seconds for SessionEnd(clear) to record its capture, if it has not yet
CLEAR_WAIT_FOR_UPLOAD = 2.0  # seconds from the hook's start for the upload's URL
_ROOM_FOR_NOTES = 200


def handle(payload: dict) -> None:
    started = time.monotonic()
    settings = config.load()
    source = str(payload.get("source") or "startup")
    cwd = str(payload.get("cwd") or os.getcwd())
    notes, warning = _clear_notes(settings, cwd, started) if source == "clear" else ([], "")
    if settings["auto_resume_on_start"]:
        room = INLINE_LIMIT - sum(len(n) + 2 for n in notes) - _ROOM_FOR_NOTES
        notes.append(_digest(settings, cwd, min(int(settings["context_budget"]), room)))
    emit([n for n in notes if n], warning)


def emit(notes: list[str], warning: str = "") -> None:
    """Print the hook's JSON answer (nothing at all when there is nothing to say)."""
    if not notes and not warning:
        return
    output: dict = {}
    if notes:
        text = cut("\n\n".join(notes), INLINE_LIMIT)
        output["hookSpecificOutput"] = {"hookEventName": EVENT, "additionalContext": text}
    if warning:
        output["systemMessage"] = warning
    sys.stdout.write(json.dumps(output, ensure_ascii=False) + "\n")


def _digest(settings: config.Config, cwd: str, budget: int) -> str:
    """The server's digest for this branch and these files; "" when it cannot be had quickly."""
    if not settings.server or not settings.token:
        log.info("session start: no server or token configured; no context digest")
        return ""
    from sessionledger import context
    from sessionledger.api import Client
    from sessionledger.project import for_directory

    try:
        api = Client(settings.server, settings.token, timeout=float(settings["context_timeout"]))
        slug = for_directory(cwd, settings, api)
        digest = context.for_directory(api, slug, cwd, budget=budget)
    except Exception as exc:  # unreachable, slow, 401, unknown project…: the session starts anyway
        log.warning(f"session start: no context digest: {exc}")
        return ""
    if not digest.get("sessions"):
        return ""  # a header with nothing under it is noise in every new session
    return str(digest.get("text") or "")


def _clear_notes(settings: config.Config, cwd: str, started: float) -> tuple[list[str], str]:
    """(context lines, message for the user) about what the /clear captured and left behind."""
    worktree = clears.place(cwd)
    captured = None
    if settings["auto_checkpoint_on_clear"] and settings["auto_resume_on_start"]:
        record = clears.take(cwd, wait=CLEAR_WAIT_FOR_END)
        if record is not None:
            remaining = max(0.0, CLEAR_WAIT_FOR_UPLOAD - (time.monotonic() - started))
            captured = clears.outcome(record, worktree, wait=remaining)
    notes = [f"Sessionledger: before /clear, {captured.sentence()}."] if captured else []
    warning = _uncommitted_warning(worktree) if settings["verify_before_clear"] else ""
    if warning:
        notes.append(warning + " Mention it to the user before starting unrelated work.")
    return notes, warning


def _uncommitted_warning(worktree: str) -> str:
    from sessionledger.worktree import describe, uncommitted

    if not os.path.isdir(worktree):
        return ""
    stat = uncommitted(worktree, timeout=2.0)
    if not stat["files"]:
        return ""
    shown = ", ".join(stat["paths"][:10]) + (" …" if len(stat["paths"]) > 10 else "")
    return f"Uncommitted work from before /clear: {describe(stat)} ({shown})."

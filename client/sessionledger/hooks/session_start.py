"""SessionStart: give the assistant the context digest of earlier sessions (docs/design.md §6, §7).

Prints `{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": …}}` for
every source (`startup`, `resume`, `clear`, `compact`, `fork`), at most 10,000 characters so
Claude Code keeps it inline instead of writing it to a file. After a `/clear` it starts with
what the SessionEnd hook captured ("captured N messages as <url>; uncommitted: …").

The digest is short by default — titles, commit messages and files, `context_budget` (2,000)
characters, teammates' prompts only with `context_prompts` — because it enters every session
and comes back after each compaction (docs/client.md "SessionStart"). Both settings can be set
per repository (`sessionledger config set --repo …`).

It must never get in the way of a session starting: no server, no token, the network down, a
server that accepts connections and never answers, a DNS lookup that hangs — everything that
waits for the network shares one deadline, `context_timeout` (0.5 s) from the hook's start,
and runs in a thread the hook does not wait for beyond it (the hook ends with `os._exit`).
What is late is left out; the hook exits 0, printing nothing when it has nothing to say.

The digest itself is read from the repository's cache (`context.cached`), which the uploader
refreshes after each upload; when the cache has nothing for this branch and these settings, or is
older than `context.REFRESH_AFTER`, a detached process fetches it for the next start
(`context.refresh_detached`), however slow the server. Only with nothing cached does the hook also
ask the server itself, within the deadline.
`auto_resume_on_start` off prints nothing, except the uncommitted-work warning that
`verify_before_clear` asks for.

An earlier session that ended without its SessionEnd hook (only the git hook installed, a killed
agent) left its last words uncaptured: the hook then starts the detached uploader, which queues
them as `end` before it uploads (`tails`).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable

from sessionledger import clears, config, gitrefs, log
from sessionledger.context import INLINE_LIMIT, REFRESH_AFTER, cached, cut, hook_budget

EVENT = "SessionStart"
CLEAR_WAIT_FOR_END = 0.5  # seconds for SessionEnd(clear) to record its capture, if it has not yet


def handle(payload: dict) -> None:
    started = time.monotonic()
    source = str(payload.get("source") or "startup")
    cwd = str(payload.get("cwd") or os.getcwd())
    settings = config.load(cwd)
    deadline = started + float(settings["context_timeout"])
    digest, kept = None, None
    budget, prompts = hook_budget(int(settings["context_budget"])), bool(settings["context_prompts"])
    if settings["auto_resume_on_start"]:
        found = cached(cwd, budget, prompts)
        kept = found[0] if found is not None else None
        if found is None or time.time() - found[1] > REFRESH_AFTER:
            _refresh_for_next_start(settings, cwd)  # before any thread: it forks
        if kept is None:  # never fetched for this branch (and settings): ask, within the deadline
            digest = Background(lambda: _digest(settings, cwd, budget))
    notes, warning = _clear_notes(settings, cwd, deadline) if source == "clear" else ([], "")
    tails = _tails_waiting()  # while the digest's request is on its way
    if kept is not None:
        notes.append(kept)
    if digest is not None:
        notes.append(digest.result(deadline, default=""))
    emit([n for n in notes if n], warning)
    if tails:
        from sessionledger.spawn import start_uploader

        start_uploader()  # it queues them (`tails.sweep`) and uploads, detached


def _refresh_for_next_start(settings: config.Config, cwd: str) -> None:
    """Fetch this repository's digest into the cache in a detached process: the next start reads it
    even from a server slower than `context_timeout` (this one waits for nothing of it)."""
    if not settings.server or not settings.token or gitrefs.find_repo(cwd) is None:
        return  # a digest is cached per repository: outside one there is nothing to keep
    from sessionledger.context import refresh_detached
    from sessionledger.spawn import start_detached

    start_detached(lambda: refresh_detached(cwd))


def _tails_waiting() -> bool:
    """Did an earlier session end with no hook capturing its last words? (`tails`)"""
    try:
        from sessionledger import tails

        return bool(tails.stale())
    except Exception:
        log.exception("session start: looking for uncaptured tails failed")
        return False


class Background:
    """Run `work` in a daemon thread; `result` waits for it until a deadline, no longer."""

    def __init__(self, work: Callable[[], str]) -> None:
        self.value: str | None = None
        self.thread = threading.Thread(target=self._run, args=(work,), daemon=True)
        self.thread.start()

    def _run(self, work: Callable[[], str]) -> None:
        self.value = work()

    def result(self, deadline: float, *, default: str) -> str:
        self.thread.join(max(0.0, deadline - time.monotonic()))
        if self.thread.is_alive():
            log.warning("session start: no context digest: the server did not answer in time (timed out)")
            return default
        return self.value if self.value is not None else default


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
    """The server's digest for this branch and these files; "" when it cannot be had."""
    if not settings.server or not settings.token:
        log.info("session start: no server or token configured; no context digest")
        return ""
    from sessionledger import context
    from sessionledger.api import Client
    from sessionledger.project import for_directory

    try:
        api = Client(settings.server, settings.token, timeout=float(settings["context_timeout"]))
        slug = for_directory(cwd, settings, api)
        prompts = bool(settings["context_prompts"])
        digest = context.for_directory(api, slug, cwd, budget=budget, prompts=prompts)
        context.store(cwd, digest, budget=budget, prompts=prompts)
    except Exception as exc:  # unreachable, slow, 401, unknown project…: the session starts anyway
        log.warning(f"session start: no context digest: {exc}")
        return ""
    if not digest.get("sessions"):
        return ""  # a header with nothing under it is noise in every new session
    return str(digest.get("text") or "")


def _clear_notes(settings: config.Config, cwd: str, deadline: float) -> tuple[list[str], str]:
    """(context lines, message for the user) about what the /clear captured and left behind."""
    worktree = clears.place(cwd)
    captured = None
    if settings["auto_checkpoint_on_clear"] and settings["auto_resume_on_start"]:
        record = clears.take(cwd, wait=CLEAR_WAIT_FOR_END)
        if record is not None:
            captured = clears.outcome(record, worktree, wait=max(0.0, deadline - time.monotonic()))
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

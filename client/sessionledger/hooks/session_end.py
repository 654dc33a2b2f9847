"""SessionEnd: capture the conversation after the last capture, so none is lost because no
commit followed it (docs/design.md §7 "Delta").

The kind comes from the end reason: `clear` for `/clear` (unless `auto_checkpoint_on_clear` is
off: then nothing is captured), `end` otherwise. Claude Code gives all SessionEnd hooks 1.5 s
together: this only queues offsets and detaches the uploader; a clear's diff stat is taken in
the detached process (see `clears`).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from sessionledger import gitrefs, log, paths, state
from sessionledger.checkpoint import claim_unseen_commit, observe_claimed
from sessionledger.queue import Entry
from sessionledger.segments import Request, capture
from sessionledger.spawn import start_uploader

DEFAULT_KIND = "end"
KIND_BY_REASON: dict[str, str] = {"clear": "clear"}


def handle(payload: dict) -> None:
    transcript = payload.get("transcript_path")
    kind = KIND_BY_REASON.get(str(payload.get("reason")), DEFAULT_KIND)
    before = None
    if _enabled(kind):
        usable = isinstance(transcript, str) and os.path.exists(transcript)
        entry = capture_segment(payload, transcript if usable else None, kind)
        if entry is not None and kind == "clear":
            before = _snapshot(entry.id)
    if isinstance(transcript, str):
        from sessionledger.tasks import attach_to_commit

        attach_to_commit(transcript, None)  # no commit followed: the tasks keep the HEAD they closed at
    if _queue_waiting():
        start_uploader(before)  # also flushes segments still waiting from earlier failures


def _enabled(kind: str) -> bool:
    if kind != "clear":
        return True
    from sessionledger import config

    try:
        enabled = bool(config.load()["auto_checkpoint_on_clear"])
    except config.ConfigError as exc:
        log.warning(f"/clear: {exc}; capturing with the default settings")
        return True
    if enabled:
        return True
    log.info("/clear: not captured (auto_checkpoint_on_clear is off)")
    return False


def _snapshot(entry_id: str) -> Callable[[], None]:
    """What the detached process does first: the diff stat as it is at the clear."""

    def run() -> None:
        from sessionledger import clears

        clears.snapshot_uncommitted(entry_id)

    return run


def _queue_waiting() -> bool:
    try:
        return bool(os.listdir(paths.queue_dir()))
    except OSError:
        return False


def capture_segment(payload: dict, transcript: str | None, kind: str) -> Entry | None:
    """Queue the trailing segment, linked to HEAD. A clear is recorded for the SessionStart that
    follows even when nothing was captured, so that it need not wait for a record."""
    cwd = str(payload.get("cwd") or os.getcwd())
    request = _request(payload, transcript, kind, cwd) if transcript else None
    if request is None and kind != "clear":
        return None
    with state.transaction() as txn:
        if request is not None:
            claim_unseen_commit(txn, request)
        entry = capture(txn, request) if request is not None else None
        if request is not None:
            observe_claimed(request, entry)
        if kind == "clear":
            from sessionledger import clears

            clears.remember(txn, cwd, entry, payload.get("session_id"))
    return entry


def _request(payload: dict, transcript: str, kind: str, cwd: str) -> Request | None:
    repo = gitrefs.find_repo(cwd)
    sha, ref = gitrefs.read_head(repo) if repo else (None, None)
    if sha is None:
        log.info(f"session end in {cwd}: no commit to link the trailing segment to; left for later")
        return None
    return Request(
        transcript,
        kind,
        session_id=payload.get("session_id"),
        commit=sha,
        branch=gitrefs.branch_name(ref),
        repo=repo,
        cwd=cwd,
    )

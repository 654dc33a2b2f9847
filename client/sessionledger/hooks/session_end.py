"""SessionEnd: capture the conversation after the last capture, so none is lost because no
commit followed it (SPEC §7 "Delta").

The kind comes from the end reason; `clear` (SPEC's /clear capture) is a later issue and will
be one entry in `KIND_BY_REASON`. Claude Code gives all SessionEnd hooks 1.5 s together: this
only queues offsets and detaches the uploader.
"""

from __future__ import annotations

import os

from sessionledger import gitrefs, log, paths, state
from sessionledger.segments import Request, capture
from sessionledger.spawn import start_uploader

DEFAULT_KIND = "end"
KIND_BY_REASON: dict[str, str] = {}


def handle(payload: dict) -> None:
    transcript = payload.get("transcript_path")
    if isinstance(transcript, str) and os.path.exists(transcript):
        kind = KIND_BY_REASON.get(str(payload.get("reason")), DEFAULT_KIND)
        capture_trailing(payload, transcript, kind)
    if _queue_waiting():
        start_uploader()  # also flushes segments still waiting from earlier failures


def _queue_waiting() -> bool:
    try:
        return bool(os.listdir(paths.queue_dir()))
    except OSError:
        return False


def capture_trailing(payload: dict, transcript: str, kind: str) -> bool:
    cwd = str(payload.get("cwd") or os.getcwd())
    repo = gitrefs.find_repo(cwd)
    sha, ref = gitrefs.read_head(repo) if repo else (None, None)
    if sha is None:
        log.info(f"session end in {cwd}: no commit to link the trailing segment to; left for later")
        return False
    request = Request(
        transcript,
        kind,
        session_id=payload.get("session_id"),
        commit=sha,
        branch=gitrefs.branch_name(ref),
        repo=repo,
        cwd=cwd,
    )
    with state.transaction() as txn:
        return capture(txn, request) is not None

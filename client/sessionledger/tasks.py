"""Task sessions (SPEC §7 "Tasks"): a start mark, and a capture when the task is finished.

`task start ID` (or `bd update ID --status in_progress`) records where the task began in the
current transcript; `task finish ID --status …` (or `bd close ID`) captures from that mark — or
from the last capture when there is none — to now, as an overlay that leaves the checkpoint
offset alone (see `segments`).
"""

from __future__ import annotations

import time

from sessionledger import beads, gitrefs, log, state
from sessionledger.queue import Entry
from sessionledger.segments import Request, capture, sizes_now

STATUSES = ("complete", "rejected", "abandoned")


def from_bash(payload: dict, command: str, cwd: str) -> bool:
    """Handle `bd update … in_progress` / `bd close …` seen in a Bash call; True when queued."""
    transcript = payload.get("transcript_path")
    if not isinstance(transcript, str):
        return False
    for task_id in beads.started_ids(command):
        mark_start(task_id, transcript, cwd)
    queued = False
    for task_id in beads.closed_ids(command):
        if beads.succeeded(payload.get("tool_response"), task_id):
            queued = finish(task_id, "complete", transcript, cwd, session_id=payload.get("session_id")) is not None
    return queued


def mark_start(task_id: str, transcript: str, cwd: str) -> dict:
    """Remember where a task starts; a second start of the same task keeps the first mark."""
    offset, subagents = sizes_now(transcript)
    with state.transaction() as txn:
        mark = txn.tasks.setdefault(
            task_id,
            {"transcript": transcript, "offset": offset, "subagents": subagents, "started_at": time.time(), "cwd": cwd},
        )
    log.info(f"task {task_id} started at byte {mark['offset']} of {transcript}")
    return mark


def finish(task_id: str, status: str, transcript: str, cwd: str, *, session_id: str | None = None) -> Entry | None:
    """Queue the task's segment with its final status; the start mark is consumed."""
    repo = gitrefs.find_repo(cwd)
    sha, ref = gitrefs.read_head(repo) if repo else (None, None)
    request = Request(
        transcript,
        "task",
        session_id=session_id,
        commit=sha,
        branch=gitrefs.branch_name(ref),
        repo=repo,
        task_id=task_id,
        status=status,
        cwd=cwd,
    )
    with state.transaction() as txn:
        mark = txn.tasks.pop(task_id, None)
        same_file = bool(mark) and mark.get("transcript") == transcript
        start = int(mark["offset"]) if same_file else txn.transcript(transcript)["offset"]
        sub_starts = mark.get("subagents", {}) if same_file else txn.transcript(transcript)["subagents"]
        return capture(txn, request, start=start, sub_starts=dict(sub_starts))

"""Task sessions (docs/design.md §7 "Tasks"): a start mark, and a capture when the task is finished.

`task start ID` (or `bd update ID --status in_progress`) records where the task began in the
current transcript and the commit HEAD was at; `task finish ID --status …` (or `bd close ID`)
captures the task's own span, as an overlay that leaves the checkpoint offset alone (see
`segments`). What docs/client.md "Task sessions" promises:

- **its own span**: from the start mark; without one, from the last capture of the transcript
  or the end of the previous task captured from it, whichever is later — so an epic closed
  after its children does not carry the whole conversation again;
- **the work it covers**: a commit made during the task links it to that commit. Closed before
  any (the usual `bd close` then `git commit`), it waits in the queue for the next commit of
  this conversation, or for the session's end (then HEAD), at most `WAIT_FOR_COMMIT` seconds.
"""

from __future__ import annotations

import time

from sessionledger import beads, gitrefs, log, observe, queue, state
from sessionledger.intent import TaskMark, TranscriptRecord
from sessionledger.queue import Entry
from sessionledger.segments import Request, capture, sizes_now

STATUSES = ("complete", "rejected", "abandoned")
WAIT_FOR_COMMIT = 3600.0  # seconds a closed task waits for the commit of its work


def from_bash(payload: dict, command: str, cwd: str) -> bool:
    """Handle `bd update … in_progress` / `bd close …` seen in a Bash call; True when queued."""
    transcript = payload.get("transcript_path")
    if not isinstance(transcript, str):
        return False
    for task_id in beads.started_ids(command):
        mark_start(task_id, transcript, cwd)
    queued = False
    response = payload.get("tool_response")
    if response is None and isinstance(payload.get("error"), str):  # PostToolUseFailure
        response = {"stdout": payload["error"]}
    for task_id in beads.closed_ids(command):
        if beads.succeeded(response, task_id):
            entry = finish(task_id, "complete", transcript, cwd, session_id=payload.get("session_id"), wait=True)
            queued = entry is not None or queued
    return queued


def mark_start(task_id: str, transcript: str, cwd: str) -> TaskMark:
    """Remember where a task starts; a second start of the same task keeps the first mark."""
    offset, subagents = sizes_now(transcript)
    repo = gitrefs.find_repo(cwd)
    head = gitrefs.read_head(repo)[0] if repo else None
    fresh: TaskMark = {
        "transcript": transcript,
        "offset": offset,
        "subagents": subagents,
        "started_at": time.time(),
        "cwd": cwd,
        "head": head,
    }
    with state.transaction() as txn:
        mark = txn.tasks.setdefault(task_id, fresh)
    log.info(f"task {task_id} started at byte {mark['offset']} of {transcript}")
    return mark


def finish(
    task_id: str, status: str, transcript: str, cwd: str, *, session_id: str | None = None, wait: bool = False
) -> Entry | None:
    """Queue the task's segment with its final status; the start mark is consumed.

    `wait`: when no commit was made during the task, hold it for the commit that follows.
    """
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
        same_file = mark is not None and mark.get("transcript") == transcript
        start, sub_starts = _span_start(txn.transcript(transcript), mark if same_file else None)
        if wait and repo is not None and sha is not None:
            request.await_commit = not _committed_during(txn, repo, sha, mark if same_file else None, transcript)
        entry = capture(txn, request, start=start, sub_starts=sub_starts)
        if entry is not None:
            _remember_end(txn.transcript(transcript), entry)
    return entry


def _committed_during(
    txn: state.Transaction, repo: gitrefs.Repo, sha: str, mark: TaskMark | None, transcript: str
) -> bool:
    """Was HEAD committed during the task's span (then it holds the work), or is it older?"""
    before = mark.get("head") if mark else observe.seen(repo.git_dir)
    if before is not None:
        return before != sha
    from sessionledger import detect

    since = float(mark["started_at"]) if mark and mark.get("started_at") else detect.reference_time(txn, transcript)
    return detect.judge(repo, sha, since).capture


def _span_start(record: TranscriptRecord, mark: TaskMark | None) -> tuple[int, dict[str, int]]:
    """Where the task's own span begins: its mark, else after the last capture or task."""
    if mark is not None:
        return int(mark["offset"]), dict(mark.get("subagents") or {})
    subs = dict(record["subagents"])
    for path, end in (record.get("task_subagents") or {}).items():
        subs[path] = max(int(end), int(subs.get(path, 0)))
    return max(int(record["offset"]), int(record.get("task_end", 0))), subs


def _remember_end(record: TranscriptRecord, entry: Entry) -> None:
    intent = entry.intent
    record["task_end"] = max(intent.end_offset, int(record.get("task_end", 0)))
    ends = record.setdefault("task_subagents", {})
    for sub in intent.subagents:
        ends[sub.path] = max(sub.end_offset, int(ends.get(sub.path, 0)))


def attach_to_commit(transcript: str, sha: str | None) -> int:
    """Give the tasks of `transcript` waiting for their commit that commit (None: as they are)."""
    linked = 0
    for entry in queue.entries():
        if entry.waiting_for_commit and entry.intent.transcript == transcript:
            entry.update_intent(await_commit=False, **({"commit_hash": sha} if sha else {}))
            linked += 1
            log.info(f"{entry.describe()} linked to commit {(sha or entry.intent.commit_hash or '')[:10]}")
    return linked


def waited_enough(entry: Entry, now: float | None = None) -> bool:
    captured = entry.intent.captured_at
    return (now or time.time()) - captured >= WAIT_FOR_COMMIT

"""The conversation after a session's last capture, when no hook ended the session.

The SessionEnd hook queues that tail as `end`. Without it (only the git post-commit hook
installed, an agent whose end hook does not fire, a killed session) the tail would wait for a
commit that may never come. So every uploader run (started by any hook, `sync` or `capture`)
first sweeps: each transcript captured before (its record knows its repository) that has grown
past its last capture and not been written for `IDLE_SECONDS` gets the rest queued as `end`,
linked to the repository's HEAD, as SessionEnd would have. The SessionStart hook starts a
detached uploader when there is such a tail, so the sweep costs the hook one read of the state.

Idempotent through the state, like every capture (docs/design.md §7 "Delta"): the sweep takes
the lock, re-checks, queues [offset, end) and moves the offset, so an ended session (SessionEnd
already moved it) or a second sweep finds nothing, and the upload's Idempotency-Key covers the
retries. A session idle that long and later resumed simply goes on from the new offset.
"""

from __future__ import annotations

import os
import time
from typing import Any

from sessionledger import gitrefs, log, state
from sessionledger.checkpoint import claim_unseen_commit, observe_claimed
from sessionledger.queue import Entry
from sessionledger.segments import Request, capture

IDLE_SECONDS = 10 * 60  # not written for this long: the session is over (or waits; it resumes later)


def stale(now: float | None = None) -> list[str]:
    """Transcripts with an uncaptured tail, idle long enough; read without the lock."""
    now = time.time() if now is None else now
    records = state.load()["transcripts"]
    return [path for path, record in records.items() if _is_stale(path, record, now)]


def sweep(now: float | None = None) -> list[Entry]:
    """Queue the tail of every stale transcript as `end`; the entries queued."""
    now = time.time() if now is None else now
    if not stale(now):
        return []
    queued: list[tuple[str, Entry]] = []
    with state.transaction() as txn:
        for path, record in list(txn.data["transcripts"].items()):
            if _is_stale(path, record, now):
                entry = _capture(txn, path, record)
                queued += [(path, entry)] if entry is not None else []
    from sessionledger.tasks import attach_to_commit

    for path, _ in queued:
        attach_to_commit(path, None)  # no commit followed: its closed tasks keep their HEAD
    return [entry for _, entry in queued]


def _capture(txn: state.Transaction, path: str, record: dict[str, Any]) -> Entry | None:
    """Queue one tail; a transcript that cannot be captured costs only itself."""
    try:
        request = _request(path, record)
        if request is not None:
            claim_unseen_commit(txn, request)  # a commit typed elsewhere after the last capture
        entry = capture(txn, request) if request is not None else None
        if request is not None:
            observe_claimed(request, entry)
    except Exception:
        log.exception(f"queueing the tail of {path} failed")
        return None
    if entry is None and request is not None:
        record["swept"] = (_size_and_mtime(path) or (None,))[0]  # no complete line after the offset yet
    return entry


def _is_stale(path: str, record: object, now: float) -> bool:
    """Grown past its offset (and past the size a sweep found holding no complete line), idle."""
    if not isinstance(record, dict) or not isinstance(record.get("repo"), str):
        return False
    found = _size_and_mtime(path)
    if found is None:
        return False
    size, written = found
    return size not in (record.get("offset"), record.get("swept")) and now - written >= IDLE_SECONDS


def _size_and_mtime(path: str) -> tuple[int, float] | None:
    try:
        facts = os.stat(path)
    except OSError:
        return None
    return facts.st_size, facts.st_mtime


def _request(path: str, record: dict[str, Any]) -> Request | None:
    repo = gitrefs.find_repo(record["repo"])
    sha, ref = gitrefs.read_head(repo) if repo else (None, None)
    if repo is None or sha is None:
        log.info(f"tail of {path}: {record['repo']} has no commit to link it to; left for later")
        return None
    session_id = record.get("session_id")
    return Request(
        path,
        "end",
        session_id=session_id if isinstance(session_id, str) else None,
        commit=sha,
        branch=gitrefs.branch_name(ref),
        repo=repo,
        cwd=repo.worktree,
    )

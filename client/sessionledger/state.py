"""Capture state shared by every hook and command: per-transcript offsets and task marks.

`transaction()` takes the state lock, loads `state.json`, and on a clean exit writes it back
atomically. Everything that decides *what* to capture (compare observed HEAD, read the offset,
queue the intent, advance the offset) happens inside one transaction, so ten hooks firing at
once capture each byte exactly once.

    {"version": 1,
     "transcripts": {path: {"offset": int, "subagents": {path: int}, "captured_at": float,
                            "session_id": str, "repo": worktree of the last capture}},
     "tasks": {task_id: {"transcript": path, "offset": int, "started_at": float, "cwd": str}},
     "projects": {normalised remote: project slug}}
"""

from __future__ import annotations

import os
import time

from sessionledger import paths
from sessionledger.fastjson import dumps, loads
from sessionledger.fsutil import FileLock, atomic_write
from sessionledger.intent import TaskMark, TranscriptRecord

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing would slow every capture
if TYPE_CHECKING:
    from typing import Any

VERSION = 1
LOCK_TIMEOUT = 30.0
_FORGET_AFTER = 120 * 86400  # transcripts Claude Code has long deleted


def load() -> dict[str, Any]:
    """The state without taking the lock (read-only views such as `status`)."""
    try:
        with open(paths.state_file(), encoding="utf-8") as handle:
            data = loads(handle.read())
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    for section in ("transcripts", "tasks", "projects"):
        if not isinstance(data.get(section), dict):
            data[section] = {}
    data["version"] = VERSION
    return data


class Transaction:
    """`with transaction() as st:` — the locked, loaded state; saved when the block succeeds."""

    def __init__(self, timeout: float = LOCK_TIMEOUT) -> None:
        self.lock = FileLock(paths.state_lock(), timeout=timeout)
        self.data: dict[str, Any] = {}

    def __enter__(self) -> Transaction:
        if not self.lock.acquire():
            raise TimeoutError("the sessionledger state is locked by another process")
        self.data = load()
        self._before = dumps(self.data)
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        try:
            if exc_type is None and dumps(self.data) != self._before:
                save(self.data)
        finally:
            self.lock.release()

    def transcript(self, path: str) -> TranscriptRecord:
        """The mutable record of one transcript (offset 0 when never captured)."""
        record: TranscriptRecord = self.data["transcripts"].setdefault(path, {})
        record.setdefault("offset", 0)
        record.setdefault("subagents", {})
        return record

    @property
    def tasks(self) -> dict[str, TaskMark]:
        tasks: dict[str, TaskMark] = self.data["tasks"]
        return tasks

    @property
    def projects(self) -> dict[str, str]:
        projects: dict[str, str] = self.data["projects"]
        return projects


def transaction(timeout: float = LOCK_TIMEOUT) -> Transaction:
    return Transaction(timeout)


def save(data: dict[str, Any]) -> None:
    _forget_old(data)
    # The file is fsynced but not its directory: after a power cut the rename may be lost, which
    # replays the last capture (a duplicate), never loses one — the queued intent is durable.
    atomic_write(paths.state_file(), dumps(data).encode(), durable=False)


def _forget_old(data: dict[str, Any]) -> None:
    """Drop records of transcripts that are gone and were last captured long ago."""
    horizon = time.time() - _FORGET_AFTER
    transcripts = data["transcripts"]
    for path in [p for p, r in transcripts.items() if r.get("captured_at", 0) < horizon]:
        if not os.path.exists(path):
            del transcripts[path]

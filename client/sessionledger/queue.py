"""The local queue: every captured segment waits here until the server has it.

One directory per segment, named so that they sort in capture order:

    queue/<time_ns>-<pid>-<rand>/
        intent.json          written by the hook before it exits (offsets, commit, kind): durable
        transcript.jsonl.gz  \
        agent-<id>.jsonl.gz   } written by the uploader once prepared (slimmed, redacted, fitted)
        metadata.json        /  the `metadata` part exactly as sent
        local.json           written last: marks the entry prepared; changed lines, counts, key
        status.json          the uploader's bookkeeping: state, attempts, next try, reason

Only a 2xx or a definitive duplicate removes an entry (docs/design.md §7); its metadata then moves to
`sent/` where `status` shows recent captures and `fork` finds which lines redaction changed.
"""

from __future__ import annotations

import os
import time

from sessionledger import paths
from sessionledger.fastjson import dumps, loads
from sessionledger.fsutil import atomic_write
from sessionledger.intent import Intent, Status

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing would slow every capture
if TYPE_CHECKING:
    from typing import Any

PENDING = "pending"  # waiting for the next attempt (new, or backing off after a transient failure)
AUTH = "auth"  # the server refused our token (401) or there is none: waits for `login`
BLOCKED = "blocked"  # no project, no server configured: waits for `init`/config
REJECTED = "rejected"  # the server refused the segment (4xx): kept with its message
BROKEN = "broken"  # the transcript bytes can no longer be read as captured
RETRIED_EVERY_RUN = (PENDING, AUTH, BLOCKED)
AWAITING = "waiting for the commit of its work (or the session's end)"  # a task closed before committing
KEEP_SENT = 500


class Entry:
    """One queued segment (a directory)."""

    def __init__(self, path: str, intent: Intent | None = None) -> None:
        self.path = path
        self.id = os.path.basename(path)
        self._intent = intent  # None: read from intent.json when first asked for

    def file(self, name: str) -> str:
        return os.path.join(self.path, name)

    @property
    def intent(self) -> Intent:
        if self._intent is None:
            self._intent = Intent.from_json(read_json(self.file("intent.json")) or {})
        return self._intent

    def status(self) -> Status:
        found: Status = read_json(self.file("status.json")) or {"state": PENDING, "attempts": 0}  # type: ignore[assignment]
        return found

    def set_status(self, **fields: Any) -> Status:
        status: Status = {**self.status(), **fields, "updated_at": time.time()}  # type: ignore[typeddict-item]
        write_json(self.file("status.json"), status)
        return status

    @property
    def prepared(self) -> bool:
        return os.path.exists(self.file("local.json"))

    def local(self) -> dict[str, Any]:
        return read_json(self.file("local.json")) or {}

    def metadata(self) -> dict[str, Any]:
        return read_json(self.file("metadata.json")) or {}

    def exists(self) -> bool:
        return os.path.exists(self.file("intent.json"))

    def update_intent(self, **fields: Any) -> None:
        """Change a queued intent before it is prepared (a task learning the commit of its work)."""
        self._intent = self.intent.replace(**fields)
        atomic_write(self.file("intent.json"), dumps(self._intent.to_json()).encode())

    @property
    def waiting_for_commit(self) -> bool:
        """A task closed before the commit of its work: held until that commit (or the end)."""
        return self.intent.await_commit

    def describe(self) -> str:
        """`checkpoint 1a2b3c4d5e` / `task SL-42 (complete)` for messages and `status`."""
        return self.intent.describe()


def new_id() -> str:
    return f"{time.time_ns()}-{os.getpid()}-{os.urandom(2).hex()}"


def enqueue(intent: Intent, files: dict[str, bytes] | None = None) -> Entry:
    """Write the intent (and `files` beside it: a snapshot's bytes) durably and return its entry.

    Built in a hidden directory and renamed into place, so the entry appears whole or not at
    all; two fsyncs (the intent, then the queue directory) make it survive a power cut.
    """
    from sessionledger.fsutil import fsync_dir, write_file

    entry_id = new_id()
    tmp = os.path.join(paths.queue_dir(), f".{entry_id}.tmp")
    os.makedirs(tmp, mode=0o700)
    for name, data in (files or {}).items():
        write_file(os.path.join(tmp, name), data)
    write_file(os.path.join(tmp, "intent.json"), dumps(intent.to_json()).encode())
    entry = Entry(os.path.join(paths.queue_dir(), entry_id), intent)  # not read back from the file just written
    os.rename(tmp, entry.path)
    fsync_dir(paths.queue_dir())
    return entry


def entries() -> list[Entry]:
    """Queued segments, oldest first (upload order: the server links each to its predecessor)."""
    try:
        names = sorted(os.listdir(paths.queue_dir()))
    except OSError:
        return []
    found = [Entry(os.path.join(paths.queue_dir(), name)) for name in names if not name.startswith(".")]
    return [entry for entry in found if entry.exists()]


def clean_stale(max_age: float = 3600) -> None:
    """Remove half-built entries (`.<id>.tmp`) left by a hook that died while enqueueing."""
    import shutil

    try:
        names = [n for n in os.listdir(paths.queue_dir()) if n.startswith(".") and n.endswith(".tmp")]
    except OSError:
        return
    for name in names:
        path = os.path.join(paths.queue_dir(), name)
        try:
            if time.time() - os.path.getmtime(path) > max_age:
                shutil.rmtree(path, ignore_errors=True)
        except OSError:
            continue


def archive(entry: Entry, outcome: dict[str, Any]) -> None:
    """Move a sent segment's metadata to `sent/` and delete its queued bytes."""
    record = {
        "id": entry.id,
        "intent": entry.intent.to_json(),
        "metadata": entry.metadata(),
        "local": entry.local(),
        "sent_at": time.time(),
        **outcome,
    }
    import shutil

    write_json(os.path.join(paths.sent_dir(), entry.id + ".json"), record)
    shutil.rmtree(entry.path, ignore_errors=True)
    _prune_sent()


def sent(limit: int = 10) -> list[dict[str, Any]]:
    """The most recent uploads, newest first."""
    try:
        names = sorted(os.listdir(paths.sent_dir()), reverse=True)
    except OSError:
        return []
    records = (read_json(os.path.join(paths.sent_dir(), n)) for n in names if n.endswith(".json"))
    return [r for r in records if r][:limit]


def _prune_sent() -> None:
    try:
        names = sorted(n for n in os.listdir(paths.sent_dir()) if n.endswith(".json"))
    except OSError:
        return
    for name in names[:-KEEP_SENT]:
        try:
            os.unlink(os.path.join(paths.sent_dir(), name))
        except OSError:
            continue


def write_json(path: str, data: object) -> None:
    atomic_write(path, dumps(data).encode())


def read_json(path: str) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as handle:
            data = loads(handle.read())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None

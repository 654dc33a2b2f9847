"""Send queued segments: prepare, upload, and decide what each answer means (docs/design.md §7).

Only a 2xx or a definitive duplicate (200 replay, 409 conflict) removes a segment. A transient
failure (unreachable, 429, 5xx) backs off exponentially with jitter, or for as long as
Retry-After says; when it concerns the whole server (unreachable, 429, 502-504) it also stops
the pass: the next segment would meet the same server. A 401 keeps
everything and waits for `login`. Any other 4xx keeps the segment as `rejected` with the
server's message, for `status`. A 413 teaches the real size limit: the segment is fitted again.

One uploader works at a time (a lock held per pass, not while sleeping, so `sync` never waits
long behind a detached uploader that is backing off). After each pass the queue is looked at
again, so a segment queued while the lock was held is never left behind.

Every request ends by the run's deadline (`uploader_max_seconds`; `upload_timeout` each), so a
slow server cannot keep the lock. The holder writes its pid and deadline into the lock file; a
holder still alive well past its deadline is stuck, and the next uploader stops it and takes
over (docs/client.md "Deadlines"). A dead holder's lock is free anyway (`flock`).

Each run first queues the conversation left after the last capture of sessions no hook ended
(`tails`).
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import Enum

from sessionledger import attribution_capture, log, paths, queue, resumable
from sessionledger import config as config_mod
from sessionledger.api import ApiError, Client
from sessionledger.fsutil import FileLock
from sessionledger.multipart import Body, Part
from sessionledger.prepare import BrokenSegment, prepare
from sessionledger.project import ProjectUnknown, for_remote, repo_pin

# Failures that say the whole server is unavailable: stop the pass instead of trying every segment.
# Others (a 500 on one request) back off that segment only, so one bad segment blocks no other.
_SERVER_WIDE = (0, 429, 502, 503, 504)
# How long past its own deadline a lock holder may still run (finishing a segment's bookkeeping)
# before it counts as stuck and is stopped.
STALE_GRACE = 30.0
# A retry is started only with at least this long left before the run's deadline: a shorter try
# times out before most servers answer, and its timeout would replace the real reason it waits.
LAST_TRY_SECONDS = 1.0
# The progress record is rewritten at most once per this many bytes sent (and at the start and end).
PROGRESS_STEP = 256 * 1024


class Mode(Enum):
    INLINE = "inline"  # one pass, no waiting (tests, `capture`)
    DETACHED = "detached"  # spawned by a hook: retries with backoff up to uploader_max_seconds
    SYNC = "sync"  # `sessionledger sync`: tries everything now; with wait, until done or stuck


class Outcome(Enum):
    SENT = "uploaded"
    DUPLICATE = "already on the server"
    RETRY = "will retry"
    KEPT = "kept"
    STOP = "stopped"


Progress = Callable[[queue.Entry, str], None]


class Summary:
    def __init__(self) -> None:
        self.sent: list[dict] = []
        self.duplicates: list[dict] = []
        self.stopped: str = ""
        self.busy = False


def run(
    mode: Mode,
    *,
    wait: bool = False,
    retry_rejected: bool = False,
    timeout: float | None = None,
    progress: Progress | None = None,
) -> Summary:
    runner = Runner(mode, wait=wait, retry_rejected=retry_rejected, timeout=timeout, progress=progress)
    return runner.run()


class Runner:
    def __init__(
        self, mode: Mode, *, wait: bool, retry_rejected: bool, timeout: float | None, progress: Progress | None
    ) -> None:
        self.mode, self.retry_rejected, self.progress = mode, retry_rejected, progress
        self.config = config_mod.load()
        self.waits = mode is Mode.DETACHED or wait
        budget = timeout if timeout is not None else float(self.config["uploader_max_seconds"])
        self.deadline = time.monotonic() + budget
        self.tried: set[str] = set()
        self.hold_until = 0.0  # after a transient failure nothing is sent before this time
        self.halted = False  # a 401 or a missing server: nothing can be sent in this run
        self.summary = Summary()
        self._client: Client | None = None
        self._waiter: FileLock | None = None
        self.uploaded_from: set[str] = set()  # repositories whose digest cache is refreshed after the run

    # --- the loop ------------------------------------------------------------------------------

    def run(self) -> Summary:
        queue.clean_stale()
        _sweep_tails()
        try:
            while not self.halted:
                if not self._locked_pass():
                    break
                if any(self._due(e) for e in queue.entries()):
                    continue  # queued while we held the lock, or due right away
                pause = self._next_retry_in()
                if not self._may_sleep(pause):
                    break
                time.sleep(pause)  # type: ignore[arg-type]
        finally:
            if self._waiter is not None:
                self._waiter.release()
        self._refresh_digests()
        return self.summary

    def _refresh_digests(self) -> None:
        """Refresh the SessionStart digest cache of each repository this run uploaded from
        (`context.refresh`), so the hook reads a file instead of waiting for the server."""
        from sessionledger import context
        from sessionledger.project import for_directory

        for worktree in sorted(self.uploaded_from):
            try:
                settings = config_mod.load(worktree)
                slug = for_directory(worktree, settings, self.client())
                budget, prompts = int(settings["context_budget"]), bool(settings["context_prompts"])
                context.refresh(self.client(), slug, worktree, budget=budget, prompts=prompts)
            except Exception as exc:  # the cache stays as it was; the next upload tries again
                log.warning(f"refreshing the context digest of {worktree} failed: {exc}")

    def _may_sleep(self, pause: float | None) -> bool:
        """Wait for the next retry? A detached uploader only if no other one is already waiting:
        while the server is down every capture starts one, and one sleeper is enough."""
        if not self.waits or pause is None or not self._time_for_a_try(after=pause):
            return False
        if self.mode is not Mode.DETACHED or self._waiter is not None:
            return True
        waiter = FileLock(paths.uploader_wait_lock(), timeout=0)
        if not waiter.acquire():
            return False
        self._waiter = waiter
        return True

    def _locked_pass(self) -> bool:
        """One pass under the uploader lock; False when another uploader holds it."""
        lock = FileLock(paths.uploader_lock(), timeout=0)
        if not lock.acquire() and not (take_over_stale(lock) or self._wait_for(lock)):
            self.summary.busy = True
            return False
        _claim(lock, time.time() + max(0.0, self.deadline - time.monotonic()))
        try:
            self._pass()
        finally:
            with contextlib.suppress(OSError):
                os.unlink(paths.uploader_progress())
            lock.release()
        return True

    def _wait_for(self, lock: FileLock) -> bool:
        """Only `sync --wait` waits for a live holder's pass to end (it asked to wait, up to its
        timeout); plain `sync` says what the holder is doing instead (`activity`)."""
        if self.mode is not Mode.SYNC or not self.waits:
            return False
        lock.timeout = max(0.0, self.deadline - time.monotonic())
        return lock.acquire()

    def _pass(self) -> None:
        """Prepare every new segment first (offline ones too), then upload in capture order."""
        entries = queue.entries()
        for entry in entries:
            if self._held(entry):
                continue
            if entry.exists() and not entry.prepared and entry.status().get("state") != queue.BROKEN:
                self._prepare_quietly(entry)
        for entry in entries:
            if self._due(entry) and entry.exists() and self._process(entry) is Outcome.STOP:
                return

    def _prepare_quietly(self, entry: queue.Entry) -> None:
        try:
            self._prepare(entry, int(entry.status().get("limit") or self.config["max_raw_bytes"]))
        except Exception:  # retried when the entry's turn to upload comes
            log.exception(f"preparing {entry.id} failed")

    @staticmethod
    def _held(entry: queue.Entry) -> bool:
        """A task waiting for the commit of its work; after `tasks.WAIT_FOR_COMMIT` it goes as it is."""
        if not entry.waiting_for_commit:
            return False
        from sessionledger import tasks

        if not tasks.waited_enough(entry):
            return True
        entry.update_intent(await_commit=False)
        return False

    def _due(self, entry: queue.Entry) -> bool:
        if self.halted or time.time() < self.hold_until or self._held(entry):
            return False
        status = entry.status()
        state = status.get("state", queue.PENDING)
        if entry.id in self.tried:
            due = state == queue.PENDING and self.waits and status.get("next_at", 0) <= time.time()
            return due and self._time_for_a_try()
        if state in queue.RETRIED_EVERY_RUN:
            forced = self.mode is Mode.SYNC
            return forced or state != queue.PENDING or status.get("next_at", 0) <= time.time()
        return self.retry_rejected

    def _time_for_a_try(self, after: float = 0.0) -> bool:
        """Is a retry `after` seconds from now left enough of the run to be answered?"""
        return time.monotonic() + after + LAST_TRY_SECONDS <= self.deadline

    def _next_retry_in(self) -> float | None:
        times = [
            e.status().get("next_at", 0)
            for e in queue.entries()
            if e.status().get("state") == queue.PENDING and not e.waiting_for_commit
        ]
        if not times or self.halted:
            return None
        return max(0.0, min(times) - time.time(), self.hold_until - time.time())

    # --- one entry -------------------------------------------------------------------------------

    def _process(self, entry: queue.Entry) -> Outcome:
        self.tried.add(entry.id)
        try:
            outcome = self._attempt(entry)
        except Exception as exc:  # a bug or a local failure: keep the segment, retry later
            log.exception(f"uploading {entry.id} failed")
            outcome = self._backoff(entry, f"local error: {exc}", None)
        if self.progress is not None:
            self.progress(entry, outcome.value)
        return outcome

    def _attempt(self, entry: queue.Entry) -> Outcome:
        status = entry.status()
        needs_prepare = not entry.prepared or status.get("reprepare")
        if needs_prepare and not self._prepare(entry, int(status.get("limit") or self.config["max_raw_bytes"])):
            return Outcome.KEPT
        try:
            client = self.client()
            pinned = entry.intent.project or repo_pin(entry.intent.repo)
            slug = for_remote(entry.local().get("remote"), self.config, client, pinned=pinned)
            if not self.config.token:
                raise ApiError(401, "not_logged_in", "Not logged in.")
            code, body = self._send(entry, client, slug)
        except ProjectUnknown as exc:
            entry.set_status(state=queue.BLOCKED, reason=str(exc))
            return Outcome.KEPT
        except ApiError as exc:
            return self._refused(entry, exc)
        return self._accepted(entry, code, body, slug)

    def _prepare(self, entry: queue.Entry, limit: int) -> bool:
        try:
            prepare(entry, self.config, limit)
        except BrokenSegment as exc:
            log.warning(f"{entry.id}: {exc}")
            entry.set_status(state=queue.BROKEN, reason=str(exc))
            return False
        resumable.discard(entry.path)  # bytes of an earlier preparation are not this segment's
        entry.set_status(reprepare=False, limit=limit)
        return True

    def client(self) -> Client:
        if self._client is None:
            timeout = float(self.config["upload_timeout"])
            self._client = Client(self.config.server, self.config.token, timeout=timeout, until=self.deadline)
        return self._client

    def _send(self, entry: queue.Entry, client: Client, slug: str) -> tuple[int, object]:
        local = entry.local()
        parts = [Part("metadata", path=entry.file("metadata.json"), content_type="application/json")]
        for part in local.get("parts") or _old_parts(local):
            name = part["file"]
            parts.append(Part(part["field"], path=entry.file(name), filename=name, content_type="application/gzip"))
        parts += filter(None, [attribution_capture.part_for_upload(entry, client.server, slug)])
        body = Body(parts)
        key = local["idempotency_key"]
        if len(body) > int(self.config["resumable_threshold"]) or resumable.read_record(entry.path) is not None:
            record = resumable.materialise(entry.path, body, body.content_type)
            return resumable.send(client, slug, entry.path, record, key, lambda n, t: _record(entry, n, t))
        sending = _Counted(body, entry, len(body))
        headers = {"Idempotency-Key": key}
        try:
            return client.post_stream(f"/projects/{slug}/sessions", sending, len(body), body.content_type, headers)
        except ApiError as exc:
            if exc.status or not sending.sent:  # an answer, or nothing left this machine: said as it is
                raise
            # a timeout or a cut while the body was out: how far it got (the next attempt sends it whole)
            said = f"{resumable.sent_of(sending.sent, len(body))}; {exc.message}"
            raise ApiError(exc.status, exc.code, said, retry_after=exc.retry_after) from None

    # --- what the server said ------------------------------------------------------------------

    def _accepted(self, entry: queue.Entry, code: int, body: object, slug: str) -> Outcome:
        reply = body if isinstance(body, dict) else {}
        duplicate = code == 200
        if (repo := entry.intent.repo) and os.path.isdir(repo):
            self.uploaded_from.add(repo)
        self.summary.stopped = ""
        queue.archive(entry, {"http_status": code, "project": slug, "session": reply, "duplicate": duplicate})
        (self.summary.duplicates if duplicate else self.summary.sent).append(reply)
        log.info(f"uploaded {entry.describe()} → {reply.get('url')} ({code})")
        return Outcome.DUPLICATE if duplicate else Outcome.SENT

    def _refused(self, entry: queue.Entry, exc: ApiError) -> Outcome:
        if exc.status == 409:
            queue.archive(entry, {"http_status": 409, "duplicate": True, "session": exc.error})
            self.summary.duplicates.append(exc.error)
            return Outcome.DUPLICATE
        if exc.status == 401:
            return self._halt(entry, queue.AUTH, f"{exc.message} Run `sessionledger login`.")
        if exc.code == "no_server":
            return self._halt(entry, queue.BLOCKED, exc.message)
        if exc.status == 413:
            return self._too_large(entry, exc)
        if exc.transient:
            return self._backoff(entry, exc.message, exc.retry_after, stop=exc.status in _SERVER_WIDE)
        entry.set_status(state=queue.REJECTED, reason=exc.message, http_status=exc.status, code=exc.code)
        log.warning(f"server rejected {entry.describe()} ({entry.id}): {exc}")
        return Outcome.KEPT

    def _halt(self, entry: queue.Entry, state: str, reason: str) -> Outcome:
        entry.set_status(state=state, reason=reason)
        self.summary.stopped = reason
        self.halted = True
        log.warning(f"{entry.id}: {reason}")
        return Outcome.STOP

    def _too_large(self, entry: queue.Entry, exc: ApiError) -> Outcome:
        limit = exc.error.get("limit")
        current = int(entry.local().get("limit") or self.config["max_raw_bytes"])
        if isinstance(limit, int) and 0 < limit < current:
            entry.set_status(reprepare=True, limit=limit)
            self.tried.discard(entry.id)
            return self._process(entry)
        entry.set_status(state=queue.REJECTED, reason=exc.message, http_status=413, code=exc.code)
        return Outcome.KEPT

    def _backoff(self, entry: queue.Entry, reason: str, retry_after: float | None, *, stop: bool = False) -> Outcome:
        attempts = int(entry.status().get("attempts", 0)) + 1
        delay = retry_after if retry_after is not None else self._delay(attempts)
        entry.set_status(state=queue.PENDING, attempts=attempts, next_at=time.time() + delay, reason=reason)
        log.info(f"{entry.id}: {reason}; retry {attempts} in {delay:.0f}s")
        if stop:
            self.summary.stopped = reason
            self.hold_until = time.time() + delay
            return Outcome.STOP
        return Outcome.RETRY

    def _delay(self, attempts: int) -> float:
        """Exponential backoff with jitter: base·2ⁿ⁻¹ capped, then a random 50-100 % of it."""
        base, cap = float(self.config["retry_base_seconds"]), float(self.config["retry_max_seconds"])
        return min(cap, base * 2 ** (attempts - 1)) * (0.5 + random.random() / 2)


def _sweep_tails() -> None:
    """Queue the tails no hook ended (`tails`) before the pass; a failure there blocks no upload."""
    try:
        from sessionledger import tails

        tails.sweep()
    except Exception:
        log.exception("queueing the tails of ended sessions failed")


def _claim(lock: FileLock, until: float) -> None:
    """Write who holds the lock and until when (wall clock), for `take_over_stale`."""
    if lock.fd is None:
        return
    try:
        os.ftruncate(lock.fd, 0)
        os.pwrite(lock.fd, f"{os.getpid()} {until:.0f}\n".encode(), 0)
    except OSError:
        pass


def holder(path: str) -> tuple[int, float] | None:
    """(pid, deadline) written by the uploader holding the lock, if any."""
    try:
        with open(path, encoding="ascii") as handle:
            pid, until = handle.read(64).split()
        return int(pid), float(until)
    except (OSError, ValueError):
        return None


def take_over_stale(lock: FileLock) -> bool:
    """Stop a lock holder that outlived its deadline (a hung request), then take the lock."""
    found = holder(lock.path)
    if found is None or time.time() < found[1] + STALE_GRACE or found[0] == os.getpid():
        return False
    pid = found[0]
    log.warning(f"uploader {pid} is past its deadline and still holds the lock: stopping it")
    with contextlib.suppress(OSError):  # gone already: its lock went with it
        os.kill(pid, signal.SIGTERM)
    lock.timeout = 10.0
    return lock.acquire()


@dataclass(frozen=True)
class Activity:
    """What the uploader holding the lock is doing: which segment, how many bytes of how many."""

    pid: int
    segment: str
    sent: int
    total: int

    def describe(self) -> str:
        """`the background uploader (pid 42) is sending checkpoint 1a2b3c4d5e: 1.2 of 4.6 MB`."""
        what = f"the background uploader (pid {self.pid})"
        if not self.segment:
            return f"{what} is preparing segments"
        return f"{what} is sending {self.segment}: {self.sent / 1e6:.1f} of {self.total / 1e6:.1f} MB"


def activity() -> Activity | None:
    """The live lock holder's progress; None when no uploader holds the lock (or it died)."""
    found = holder(paths.uploader_lock())
    if found is None or not _alive(found[0]):
        return None
    record = queue.read_json(paths.uploader_progress()) or {}
    if record.get("pid") != found[0]:  # written by an earlier holder: this one has sent nothing yet
        return Activity(found[0], "", 0, 0)
    return Activity(found[0], str(record.get("segment", "")), int(record.get("sent", 0)), int(record.get("total", 0)))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # alive, someone else's
        return True
    return True


class _Counted:
    """Stream `body`, recording how far it got for `activity` (every `PROGRESS_STEP` bytes) and
    in `sent` (the bytes handed to the connection), for a message if the request fails."""

    def __init__(self, body: Iterable[bytes], entry: queue.Entry, total: int) -> None:
        self.body, self.entry, self.total, self.sent = body, entry, total, 0

    def __iter__(self) -> Iterator[bytes]:
        recorded = -PROGRESS_STEP
        for chunk in self.body:
            if self.sent - recorded >= PROGRESS_STEP:
                _record(self.entry, self.sent, self.total)
                recorded = self.sent
            yield chunk
            self.sent += len(chunk)
        _record(self.entry, self.sent, self.total)


def _record(entry: queue.Entry, sent: int, total: int) -> None:
    progress = {"pid": os.getpid(), "segment": entry.describe(), "sent": sent, "total": total}
    with contextlib.suppress(OSError):  # progress is a courtesy: never fail an upload over it
        queue.write_json(paths.uploader_progress(), progress)


def _old_parts(local: dict) -> list[dict]:
    """The parts of an entry prepared by a client from before `parts` was recorded."""
    files = local.get("files", ["transcript.jsonl.gz"])
    return [{"file": f, "field": "transcript" if f == "transcript.jsonl.gz" else "subagent"} for f in files]

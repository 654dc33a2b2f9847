"""Conversation bytes in object storage (S3 through django-storages, or local disk).

Keys are built from ids only — ``{project_id}/{session_id}/raw.jsonl.gz`` — never from text a
user controls. Storage failures surface as ``StorageUnavailable`` so callers can answer 503 or
retry instead of crashing; a blob the bucket does not have as ``BlobMissing`` (a 404 naming it).

A breaker: once the bucket could not be reached (a timeout, a refused connection), reads and writes
in this process fail at once for ``BREAKER_SECONDS`` instead of each holding a request thread for the
client's timeouts: a blackholed bucket must not use up every gunicorn thread (the probes need one).
"""

from __future__ import annotations

import gzip
import io
import json
import threading
import time
import weakref
import zlib
from collections.abc import Iterator
from typing import IO, Any

from botocore.exceptions import BotoCoreError, ClientError, ConnectionError, ConnectTimeoutError, ReadTimeoutError
from django.conf import settings
from django.core.files.base import ContentFile, File
from django.core.files.storage import Storage, storages

from projects.errors import Missing, Unavailable
from sessions_app.budget import deferred

CHUNK = 64 * 1024


class StorageUnavailable(Unavailable):
    """Object storage could not be reached or refused the operation (an API read answers 503)."""

    code = "storage_unavailable"
    public_message = "Object storage is unavailable; retry later."


class BlobMissing(Missing, FileNotFoundError):
    """The bucket answered that it has no such blob: the session's bytes are gone (an API read answers 404)."""

    code = "content_missing"
    public_message = "This session's stored content is missing from object storage."


class TooLarge(ValueError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"the decompressed transcript exceeds the limit of {limit:,} bytes")
        self.limit = limit


class NotGzip(ValueError):
    pass


class TooManyMembers(NotGzip):
    def __init__(self, limit: int) -> None:
        super().__init__(f"the transcript has more than {limit:,} gzip members")
        self.limit = limit


STORAGE_ERRORS = (BotoCoreError, ClientError, OSError)


def blob_storage() -> Storage:
    return storages["blobs"]


def raw_key(project_id: object, session_id: object) -> str:
    return f"{project_id}/{session_id}/raw.jsonl.gz"


def content_key(project_id: object, session_id: object) -> str:
    return f"{project_id}/{session_id}/content.json.gz"


def subagent_key(project_id: object, session_id: object, index: int) -> str:
    return f"{project_id}/{session_id}/subagents/{index}.jsonl.gz"


BREAKER_SECONDS = 5.0
UNREACHABLE = (ConnectionError, ConnectTimeoutError, ReadTimeoutError)
# When each storage (the one configured; tests swap it) was last found unreachable, plus the pause.
_open_until: weakref.WeakKeyDictionary[Storage, float] = weakref.WeakKeyDictionary()
_breaker_lock = threading.Lock()


def _refused_while_unreachable(key: str) -> None:
    """Fail at once while the breaker is open; once it has been for ``BREAKER_SECONDS``, let one call
    through to try the bucket again (the others still fail at once while it tries)."""
    storage = blob_storage()
    with _breaker_lock:
        open_until = _open_until.get(storage)
        if open_until is None:
            return
        if time.monotonic() < open_until:
            raise StorageUnavailable(f"object storage unreachable a moment ago; {key} not tried")
        _open_until[storage] = time.monotonic() + BREAKER_SECONDS  # this call tries; the rest wait for it


def _reachable() -> None:
    with _breaker_lock:
        _open_until.pop(blob_storage(), None)


def _unavailable(key: str, exc: Exception, what: str) -> StorageUnavailable:
    if isinstance(exc, UNREACHABLE):
        with _breaker_lock:
            _open_until[blob_storage()] = time.monotonic() + BREAKER_SECONDS
    return StorageUnavailable(f"{what} {key}: {exc}")


def put(key: str, data: bytes | IO[bytes]) -> None:
    _refused_while_unreachable(key)
    body = ContentFile(data) if isinstance(data, bytes) else File(data)
    try:
        with deferred():  # a CPU budget spent inside boto3 could hang it (sessions_app/budget.py)
            saved = blob_storage().save(key, body)
    except STORAGE_ERRORS as exc:
        raise _unavailable(key, exc, "object storage refused") from exc
    _reachable()
    if saved != key:  # local disk renames on collision; we overwrite by deleting first on retries
        raise StorageUnavailable(f"object storage stored {key} as {saved}")


def get(key: str) -> bytes:
    with deferred(), open_stream(key) as handle:  # a CPU budget spent inside boto3 could hang it
        try:
            return handle.read()
        except STORAGE_ERRORS as exc:
            raise _unavailable(key, exc, "cannot read") from exc


def open_stream(key: str) -> IO[bytes]:
    _refused_while_unreachable(key)
    try:
        stream = blob_storage().open(key, "rb")
    except FileNotFoundError as exc:
        _reachable()  # it answered
        raise BlobMissing(f"no blob {key}") from exc
    except STORAGE_ERRORS as exc:
        raise _unavailable(key, exc, "cannot read") from exc
    _reachable()
    return stream


def check_reachable(key: str) -> None:
    """Raise ``StorageUnavailable`` unless the bucket answers about ``key`` (whether or not it has it)."""
    _refused_while_unreachable(key)
    try:
        blob_storage().exists(key)
    except STORAGE_ERRORS as exc:
        raise _unavailable(key, exc, "cannot reach") from exc
    _reachable()


def delete_reporting(*keys: str) -> list[str]:
    """Delete these blobs; the keys storage could not delete (it was unavailable) are returned."""
    storage, failed = blob_storage(), []
    for key in keys:
        try:
            storage.delete(key)
        except STORAGE_ERRORS:
            failed.append(key)
    return failed


def delete(*keys: str) -> None:
    """Best-effort removal (used to undo a half-done ingest and by retention)."""
    storage = blob_storage()
    for key in keys:
        try:
            storage.delete(key)
        except STORAGE_ERRORS:
            continue


def gunzip_bounded(stream: IO[bytes], limit: int, *, max_members: int | None = None) -> Iterator[bytes]:
    """Decompress a (possibly multi-member) gzip stream, refusing more than ``limit`` bytes out.

    Output comes in bounded pieces and is counted as it is produced, so a decompression bomb is
    refused as soon as it passes the limit: it costs neither memory nor time. Members are counted
    too: each one costs a fresh decompressor and a copy of the rest of its input chunk, so ~11 MB
    of empty members (``gzip.compress(b"") * 550000``) would otherwise keep a process busy for
    minutes; past ``max_members`` the stream is refused at once (docs/scaling.md).
    """
    inflater = _Inflater(limit, max_members or _setting("SESSIONLEDGER_MAX_GZIP_MEMBERS", 64))
    while chunk := stream.read(CHUNK):
        if inflater.members == 0 and not chunk.startswith(b"\x1f\x8b"):
            raise NotGzip("the transcript is not gzip-compressed")
        yield from inflater.feed(chunk)
    if inflater.members == 0 or inflater.open:
        raise NotGzip("the transcript gzip stream is empty or truncated")


class _Inflater:
    """One gzip stream fed chunk by chunk; every copy it makes is bounded by ``CHUNK``."""

    def __init__(self, limit: int, max_members: int) -> None:
        self.limit, self.max_members = limit, max_members
        self.produced, self.members, self.open = 0, 0, False
        self.decompressor: Any = None

    def feed(self, data: bytes) -> Iterator[bytes]:
        while data:
            if not self.open:
                self._next_member()
            piece = self._inflate(data)
            if piece:
                yield piece
            if not self.decompressor.eof and not self.decompressor.unconsumed_tail and len(piece) == CHUNK:
                yield from self._drain()  # all input taken, output still pending
            if self.decompressor.eof:
                data, self.open = self.decompressor.unused_data, False
            else:
                data = self.decompressor.unconsumed_tail

    def _drain(self) -> Iterator[bytes]:
        while not self.decompressor.eof and (piece := self._inflate(b"")):
            yield piece

    def _next_member(self) -> None:
        if self.members >= self.max_members:
            raise TooManyMembers(self.max_members)
        self.decompressor, self.open = _gzip_decompressor(), True
        self.members += 1

    def _inflate(self, data: bytes) -> bytes:
        try:
            piece = self.decompressor.decompress(data, CHUNK)
        except zlib.error as exc:
            raise NotGzip(f"the transcript is not valid gzip: {exc}") from exc
        self.produced += len(piece)
        if self.produced > self.limit:
            raise TooLarge(self.limit)
        return piece


def _gzip_decompressor() -> Any:
    return zlib.decompressobj(16 + zlib.MAX_WBITS)


def _setting(name: str, default: int) -> int:
    return int(getattr(settings, name, default))


def gunzip(data: bytes, *, limit: int | None = None) -> bytes:
    """Bounded, linear-time decompression of a stored blob (raw transcripts by default)."""
    bound = limit if limit is not None else _setting("SESSIONLEDGER_MAX_RAW_BYTES", 10 * 1024 * 1024)
    return b"".join(gunzip_bounded(io.BytesIO(data), bound))


def gzip_json(document: object) -> bytes:
    """Level 1: the content document is derived data, re-creatable from the raw blob; level 6
    costs the worker several times the time for a somewhat smaller object (bench/bench_ingest.py)."""
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    try:
        data = text.encode()
    except UnicodeEncodeError:  # a lone surrogate the parser let through: stored as U+FFFD, not fatal
        data = text.encode(errors="replace")
    return gzip.compress(data, compresslevel=1)


def load_json_gz(key: str) -> Any:
    """A content document: derived by the worker, still read through the same bounds."""
    return json.loads(gunzip(get(key), limit=_setting("SESSIONLEDGER_MAX_CONTENT_BYTES", 64 * 1024 * 1024)))

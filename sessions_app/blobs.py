"""Conversation bytes in object storage (S3 through django-storages, or local disk).

Keys are built from ids only — ``{project_id}/{session_id}/raw.jsonl.gz`` — never from text a
user controls. Storage failures surface as ``StorageUnavailable`` so callers can answer 503 or
retry instead of crashing.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from typing import IO, Any

from botocore.exceptions import BotoCoreError, ClientError
from django.core.files.base import ContentFile, File
from django.core.files.storage import Storage, storages

CHUNK = 64 * 1024


class StorageUnavailable(Exception):
    """Object storage could not be reached or refused the operation."""


class TooLarge(ValueError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"the decompressed transcript exceeds the limit of {limit:,} bytes")
        self.limit = limit


class NotGzip(ValueError):
    pass


STORAGE_ERRORS = (BotoCoreError, ClientError, OSError)


def blob_storage() -> Storage:
    return storages["blobs"]


def raw_key(project_id: object, session_id: object) -> str:
    return f"{project_id}/{session_id}/raw.jsonl.gz"


def content_key(project_id: object, session_id: object) -> str:
    return f"{project_id}/{session_id}/content.json.gz"


def subagent_key(project_id: object, session_id: object, index: int) -> str:
    return f"{project_id}/{session_id}/subagents/{index}.jsonl.gz"


def put(key: str, data: bytes | IO[bytes]) -> None:
    body = ContentFile(data) if isinstance(data, bytes) else File(data)
    try:
        saved = blob_storage().save(key, body)
    except STORAGE_ERRORS as exc:
        raise StorageUnavailable(f"object storage refused {key}: {exc}") from exc
    if saved != key:  # local disk renames on collision; we overwrite by deleting first on retries
        raise StorageUnavailable(f"object storage stored {key} as {saved}")


def get(key: str) -> bytes:
    try:
        with blob_storage().open(key, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        raise
    except STORAGE_ERRORS as exc:
        raise StorageUnavailable(f"cannot read {key}: {exc}") from exc


def open_stream(key: str) -> IO[bytes]:
    try:
        return blob_storage().open(key, "rb")
    except FileNotFoundError:
        raise
    except STORAGE_ERRORS as exc:
        raise StorageUnavailable(f"cannot read {key}: {exc}") from exc


def delete(*keys: str) -> None:
    """Best-effort removal (used to undo a half-done ingest and by retention)."""
    storage = blob_storage()
    for key in keys:
        try:
            storage.delete(key)
        except STORAGE_ERRORS:
            continue


def gunzip_bounded(stream: IO[bytes], limit: int) -> Iterator[bytes]:
    """Decompress a (possibly multi-member) gzip stream, refusing more than ``limit`` bytes out.

    Output comes in bounded pieces and is counted as it is produced, so a decompression bomb is
    refused as soon as it passes the limit: it costs neither memory nor time.
    """
    decompressor, produced, member_open, seen = _gzip_decompressor(), 0, False, False
    while chunk := stream.read(CHUNK):
        if not seen and not chunk.startswith(b"\x1f\x8b"):
            raise NotGzip("the transcript is not gzip-compressed")
        seen, data = True, chunk
        while data is not None:
            member_open = True
            piece = _inflate(decompressor, data)
            produced += len(piece)
            if produced > limit:
                raise TooLarge(limit)
            yield piece
            if decompressor.eof:
                data, decompressor, member_open = decompressor.unused_data or None, _gzip_decompressor(), False
            else:  # more input, or more output still pending for this input
                data = decompressor.unconsumed_tail or (b"" if len(piece) == CHUNK else None)
    if not seen or member_open:
        raise NotGzip("the transcript gzip stream is empty or truncated")


def _gzip_decompressor() -> Any:
    return zlib.decompressobj(16 + zlib.MAX_WBITS)


def _inflate(decompressor: Any, data: bytes) -> bytes:
    try:
        return decompressor.decompress(data, CHUNK)
    except zlib.error as exc:
        raise NotGzip(f"the transcript is not valid gzip: {exc}") from exc


def gunzip(data: bytes) -> bytes:
    return gzip.decompress(data)


def gzip_json(document: object) -> bytes:
    """Level 1: the content document is derived data, re-creatable from the raw blob; level 6 cost
    the worker 5 times the time for a 25% smaller object (bench/bench_ingest.py)."""
    return gzip.compress(json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode(), compresslevel=1)


def load_json_gz(key: str) -> Any:
    return json.loads(gunzip(get(key)))

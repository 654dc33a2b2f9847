"""Uploads sent in parts, so a cut link resumes where it stopped (docs/api.md "Resumable uploads").

The server keeps the parts itself, as blobs under ``uploads/``, rather than handing the client
pre-signed URLs for a multipart upload straight into the bucket: S3 refuses a multipart part
under 5 MiB (but the last), and a link of 16 KB/s cut every 60 s carries at most ~1 MB per
connection, so no such part would ever arrive (bench/bench_resumable.py measures it). The
bucket also need not be reachable from the developer's machine.

What is declared up front bounds everything after it: the body's size (at most
``SESSIONLEDGER_MAX_UPLOAD_BYTES``, like one request) fixes how many parts there are and how long
each one is; a part's SHA-256 is kept, so sending it again changes nothing and other bytes for it
are a 409; the whole body's SHA-256 is checked when the parts are joined. Only the token's user
sees an upload (another member's is a 404 like a missing one). An author keeps at most
``MAX_OPEN`` unfinished uploads per project (the oldest goes), and uploads older than
``KEEP_DAYS`` go with their parts when the author begins the next one, or at the hourly retention
run (``sweep_abandoned``) for an author who never comes back.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import IO, Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from projects.errors import DomainError
from projects.models import Project
from projects.scoping import unscoped
from sessions_app import blobs
from sessions_app.models import PartialUpload

MAX_OPEN = 16
KEEP_DAYS = 7
_SHA256 = re.compile(r"[0-9a-f]{64}")
_FORM = re.compile(r"multipart/form-data; boundary=[0-9A-Za-z'()+_,./:=?-]{1,70}")


def part_size() -> int:
    return int(settings.SESSIONLEDGER_UPLOAD_PART_BYTES)


def part_key(upload: PartialUpload, index: int) -> str:
    return f"uploads/{upload.project_id}/{upload.pk}/{index}"


def part_count(upload: PartialUpload) -> int:
    return -(-upload.size // upload.part_size)


def part_length(upload: PartialUpload, index: int) -> int:
    """The exact length of part ``index`` (the last one holds what is left)."""
    return min(upload.part_size, upload.size - index * upload.part_size)


def received_bytes(upload: PartialUpload) -> int:
    return sum(part_length(upload, int(index)) for index in upload.parts)


def missing(upload: PartialUpload) -> list[int]:
    return [i for i in range(part_count(upload)) if str(i) not in upload.parts]


def begin(
    project: Project, author: Any, key: str, size: object, sha256: object, content_type: object
) -> tuple[PartialUpload, bool]:
    """The open upload of this key (same size and digest: resume it), or a new one; (upload, created)."""
    limit = settings.SESSIONLEDGER_MAX_UPLOAD_BYTES
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise DomainError("invalid", "size is the request body's length in bytes (at least 1).", field="size")
    if size > limit:
        raise DomainError.too_large(f"Upload refused: the body exceeds {limit:,} bytes.", limit=limit, field="size")
    if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256):
        raise DomainError("invalid", "sha256 is the body's SHA-256, 64 lowercase hex digits.", field="sha256")
    if not isinstance(content_type, str) or not _FORM.fullmatch(content_type):
        raise DomainError(
            "invalid", "content_type is the body's `multipart/form-data; boundary=…`.", field="content_type"
        )
    _forget_old(project, author)
    with transaction.atomic():
        found = PartialUpload.objects.select_for_update().filter(project=project, author=author, idempotency_key=key)
        existing = found.first()
        if existing is not None and existing.size == size and existing.sha256 == sha256:
            return existing, False
        if existing is not None:  # the segment was prepared again (other bytes): start over
            _drop(existing)
        upload = PartialUpload.objects.create(
            project=project,
            author=author,
            idempotency_key=key,
            size=size,
            sha256=sha256,
            content_type=content_type,
            part_size=part_size(),
        )
    open_ones = PartialUpload.objects.filter(project=project, author=author, session__isnull=True)
    for old in open_ones.order_by("-created_at")[MAX_OPEN:]:
        _drop(old)
    return upload, True


def store_part(upload: PartialUpload, index: int, stream: Any, length: int | None) -> bool:
    """Store part ``index`` read from ``stream``; False when it was stored already (same bytes)."""
    if not 0 <= index < part_count(upload):
        raise DomainError(
            "invalid",
            f"Part {index} does not exist: this upload has parts 0 to {part_count(upload) - 1}.",
            field="part",
        )
    expected = part_length(upload, index)
    if length is not None and length > expected:
        raise DomainError.too_large(
            f"Part {index} is {expected:,} bytes; {length:,} were sent.", limit=expected, field="part"
        )
    data = stream.read(expected + 1)  # never more than one byte past what the part may hold
    if len(data) != expected:
        word = "more" if len(data) > expected else "fewer"
        raise DomainError(
            "too_large" if len(data) > expected else "incomplete",
            f"Part {index} is {expected:,} bytes; {word} arrived.",
            field="part",
            status_code=413 if len(data) > expected else 400,
            extra={"limit": expected},
        )
    digest = hashlib.sha256(data).hexdigest()
    known = upload.parts.get(str(index))
    if known is not None or upload.session_id is not None:
        if known not in (None, digest):
            raise DomainError("conflict", f"Part {index} is stored with other bytes.", field="part", status_code=409)
        return False
    blobs.put(part_key(upload, index), data)  # outside the row lock: a slow bucket holds no other part
    with transaction.atomic():
        locked = PartialUpload.objects.select_for_update().get(pk=upload.pk)
        locked.parts[str(index)] = digest
        locked.save(update_fields=["parts"])
    upload.parts = locked.parts
    return True


def joined(upload: PartialUpload) -> IO[bytes]:
    """The whole body, from its parts in order, checked against the declared digest."""
    if gaps := missing(upload):
        shown = ", ".join(str(i) for i in gaps[:20]) + (" …" if len(gaps) > 20 else "")
        raise DomainError(
            "missing_parts",
            f"{len(gaps)} of {part_count(upload)} parts have not arrived: {shown}.",
            field="part",
            status_code=409,
            extra={"missing": gaps},
        )
    body = tempfile.SpooledTemporaryFile(max_size=8 * 2**20)  # noqa: SIM115  # handed to the caller
    digest = hashlib.sha256()
    for index in range(part_count(upload)):
        data = blobs.get(part_key(upload, index))
        digest.update(data)
        body.write(data)
    if digest.hexdigest() != upload.sha256:
        body.close()
        _forget_parts(upload)
        raise DomainError(
            "checksum_mismatch",
            "The parts joined do not have the declared sha256; they were dropped: send the upload again.",
            field="sha256",
        )
    body.seek(0)
    return body


def finished(upload: PartialUpload, session: Any, status_code: int) -> None:
    """Remember the answer (a repeated finish gives it again) and free the parts."""
    upload.session = session
    upload.finished_status = status_code
    upload.save(update_fields=["session", "finished_status"])
    _delete_blobs(part_key(upload, int(i)) for i in upload.parts)


def _forget_parts(upload: PartialUpload) -> None:
    keys = [part_key(upload, int(i)) for i in upload.parts]
    upload.parts = {}
    upload.save(update_fields=["parts"])
    _delete_blobs(keys)


def _drop(upload: PartialUpload) -> None:
    keys = [part_key(upload, int(i)) for i in upload.parts]
    upload.delete()
    _delete_blobs(keys)


def _forget_old(project: Project, author: Any) -> None:
    horizon = timezone.now() - timedelta(days=KEEP_DAYS)
    for old in PartialUpload.objects.filter(project=project, author=author, created_at__lt=horizon):
        _drop(old)


def sweep_abandoned(now: datetime | None = None, batch: int = 500) -> int:
    """Delete uploads begun more than ``KEEP_DAYS`` ago, every project's, with their stored parts;
    how many went. The hourly retention run calls it (``retention.retention_apply_all``).

    An unfinished one is abandoned: at 16 KB/s the largest body arrives in well under a day. A
    finished one's parts went at its finish; its row only answered a repeated finish. The parts
    are deleted before the row, so one that storage could not delete (unavailable) is kept,
    still naming its parts, for the next sweep."""
    horizon = (now or timezone.now()) - timedelta(days=KEEP_DAYS)
    swept = 0
    with unscoped():
        for upload in PartialUpload.objects.filter(created_at__lt=horizon).order_by("created_at")[:batch]:
            if blobs.delete_reporting(*(part_key(upload, int(index)) for index in upload.parts)):
                continue
            upload.delete()
            swept += 1
    return swept


def _delete_blobs(keys: Iterable[str]) -> None:
    blobs.delete(*keys)  # best effort: parts left behind cost storage, never correctness

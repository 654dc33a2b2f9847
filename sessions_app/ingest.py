"""``session_ingest``: an upload becomes a durable blob plus a row, then a queued task.

Order matters (rule 8): blobs first, then the row in a transaction whose commit enqueues the
processing task. Storage down → 503 and no row; a failed insert removes its blobs; a broker that
is down leaves the row ``processing`` for the sweep to re-queue — nothing is lost either way.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import IO, Any

from django.conf import settings
from django.db import IntegrityError, transaction

from config import metrics
from projects.errors import DomainError
from projects.models import Project, User
from sessions_app import blobs
from sessions_app.links import session_api_url
from sessions_app.models import Kind, Session, Status

logger = logging.getLogger(__name__)
STORAGE_RETRY_AFTER = 30


@dataclass(frozen=True)
class Upload:
    """One gzip part of the request: the transcript or a sub-agent transcript."""

    stream: IO[bytes]
    size: int
    agent_id: str = ""


@dataclass(frozen=True)
class IngestResult:
    session: Session
    created: bool


def session_ingest(
    *,
    project: Project,
    author: User,
    metadata: dict[str, Any],
    transcript: Upload,
    subagents: list[Upload],
    idempotency_key: str | None,
) -> IngestResult:
    existing = _duplicate_of(project, metadata, idempotency_key)
    if existing is not None:
        return IngestResult(existing, created=False)
    raw_size, sizes = _measure_all(transcript, subagents)
    session = _new_session(project, author, metadata, idempotency_key, raw_size)
    keys = _store_blobs(session, transcript, subagents, sizes, metadata)
    try:
        with transaction.atomic():
            session.save(force_insert=True)
            transaction.on_commit(lambda: enqueue_processing(session.pk))
    except IntegrityError:
        blobs.delete(*keys)
        existing = _duplicate_of(project, metadata, idempotency_key)
        if existing is None:
            raise
        return IngestResult(existing, created=False)
    except BaseException:
        blobs.delete(*keys)
        raise
    metrics.UPLOADED_BYTES.inc(raw_size)
    logger.info("session %s accepted (%d bytes)", session.pk, raw_size, extra={"session_id": str(session.pk)})
    return IngestResult(session, created=True)


def _duplicate_of(project: Project, metadata: dict[str, Any], key: str | None) -> Session | None:
    """The session this upload repeats, or None; 409 for a *different* upload of a checkpoint."""
    if key:
        found = Session.objects.filter(project=project, idempotency_key=key).first()
        if found is not None:
            return found
    if metadata["kind"] != Kind.CHECKPOINT:
        return None
    found = Session.objects.filter(project=project, kind=Kind.CHECKPOINT, commit_hash=metadata["commit_hash"]).first()
    if found is None:
        return None
    if (found.agent_session_id, found.end_offset) == (metadata["agent_session_id"], metadata.get("end_offset")):
        return found
    raise DomainError(
        "conflict",
        f"Commit {metadata['commit_hash'][:12]} already has a checkpoint session.",
        field="commit_hash",
        status_code=409,
        extra={"url": session_api_url(found), "id": str(found.pk)},
    )


def _measure(upload: Upload, limit: int) -> int:
    """Decompressed size of one part, validating its gzip framing on the way."""
    try:
        size = sum(len(piece) for piece in blobs.gunzip_bounded(upload.stream, limit))
    except blobs.TooLarge as exc:
        raise DomainError(
            "too_large", f"Upload refused: {exc}.", field="transcript", status_code=413, extra={"limit": exc.limit}
        ) from None
    except blobs.NotGzip as exc:
        raise DomainError("invalid_gzip", f"Upload refused: {exc}.", field="transcript") from None
    upload.stream.seek(0)
    return size


def _measure_all(transcript: Upload, subagents: list[Upload]) -> tuple[int, list[int]]:
    limit = settings.SESSIONLEDGER_MAX_RAW_BYTES
    total = _measure(transcript, limit)
    sizes = []
    for part in subagents:
        sizes.append(_measure(part, limit - total))
        total += sizes[-1]
    return total, sizes


def _new_session(project: Project, author: User, metadata: dict[str, Any], key: str | None, raw_size: int) -> Session:
    session_id = uuid.uuid4()
    fields = {name: metadata.get(name) for name in _COPIED_FIELDS if metadata.get(name) is not None}
    return Session(
        id=session_id,
        project=project,
        author=author,
        idempotency_key=key or None,
        status=Status.PROCESSING,
        requested_status=metadata.get("status") or Status.COMPLETE,
        raw_storage_key=blobs.raw_key(project.pk, session_id),
        raw_size_bytes=raw_size,
        previous=_previous_segment(project, metadata),
        **fields,
    )


_COPIED_FIELDS = (
    "kind",
    "feature_branch",
    "commit_hash",
    "task_id",
    "amends",
    "agent",
    "agent_version",
    "agent_session_id",
    "start_offset",
    "end_offset",
    "commit_message",
    "patch_id",
    "diff_stat",
    "files_touched",
    "captured_at",
    "redaction",
)


def _previous_segment(project: Project, metadata: dict[str, Any]) -> Session | None:
    start = metadata.get("previous_end_offset", metadata.get("start_offset"))
    if not metadata.get("agent_session_id") or not start:
        return None
    return (
        Session.objects.filter(project=project, agent_session_id=metadata["agent_session_id"], end_offset=start)
        .order_by("-created_at")
        .first()
    )


def _store_blobs(
    session: Session, transcript: Upload, subagents: list[Upload], sizes: list[int], metadata: dict[str, Any]
) -> list[str]:
    offsets = {entry["agent_id"]: entry for entry in metadata.get("subagents", [])}
    planned = [(session.raw_storage_key, transcript)]
    for index, (part, size) in enumerate(zip(subagents, sizes, strict=True)):
        key = blobs.subagent_key(session.project_id, session.pk, index)
        planned.append((key, part))
        known = offsets.get(part.agent_id, {})
        session.subagents.append(
            {
                "agent_id": part.agent_id,
                "key": key,
                "raw_size_bytes": size,
                "start_offset": known.get("start_offset"),
                "end_offset": known.get("end_offset"),
            }
        )
    stored: list[str] = []
    try:
        for key, part in planned:
            blobs.put(key, part.stream)
            stored.append(key)
            session.size_bytes += part.size
    except blobs.StorageUnavailable as exc:
        blobs.delete(*stored)
        metrics.STORAGE_ERRORS.labels("ingest").inc()
        logger.warning("ingest refused, storage unavailable: %s", exc)
        raise DomainError(
            "storage_unavailable",
            "Object storage is unavailable; retry later.",
            status_code=503,
            retry_after=STORAGE_RETRY_AFTER,
        ) from None
    return stored


def enqueue_processing(session_id: object) -> None:
    """Queue processing; when the broker is down the row stays ``processing`` and the sweep re-queues it."""
    from sessions_app.tasks import process_session

    try:
        process_session.apply_async(args=[str(session_id)], retry=False)
    except Exception as exc:
        logger.warning("could not enqueue processing of %s (%s); the sweep will retry", session_id, exc)

"""``session_ingest``: an upload becomes a durable blob plus a row, then a queued task.

Order matters (docs/design.md §10 rule 8): blobs first, then the row in a transaction whose commit enqueues the
processing task. Storage down → 503 and no row; a failed insert removes its blobs; a broker that
is down leaves the row ``processing`` for the sweep to re-queue — nothing is lost either way.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from config import metrics
from projects.errors import DomainError
from projects.models import Project, User
from sessions_app import blobs, parts
from sessions_app.links import session_api_url
from sessions_app.models import Kind, Session, Status
from sessions_app.parts import Upload
from sessions_app.tasks import enqueue_new

logger = logging.getLogger(__name__)
STORAGE_RETRY_AFTER = 30


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
    if idempotency_key and (repeat := _same_key(project, idempotency_key)) is not None:
        return IngestResult(repeat, created=False)
    measured = _measure_all(transcript, subagents)
    existing = _duplicate_of(project, metadata, measured.digest)
    if existing is not None:
        return IngestResult(existing, created=False)
    session = _new_session(project, author, metadata, idempotency_key, measured)
    keys = _store_blobs(session, transcript, subagents, measured.sizes, metadata)
    try:
        with transaction.atomic():
            _refuse_unless_active(author)
            session.save(force_insert=True)
            transaction.on_commit(lambda: enqueue_new(session))
    except IntegrityError:
        blobs.delete(*keys)
        existing = _same_key(project, idempotency_key) or _duplicate_of(project, metadata, measured.digest)
        if existing is None:
            raise
        return IngestResult(existing, created=False)
    except BaseException:
        blobs.delete(*keys)
        raise
    metrics.UPLOADED_BYTES.inc(measured.total)
    logger.info("session %s accepted (%d bytes)", session.pk, measured.total, extra={"session_id": str(session.pk)})
    return IngestResult(session, created=True)


def _refuse_unless_active(author: User) -> None:
    """Refuse the upload if its author was deactivated since the request was authorised (its body may
    take minutes to arrive). The row is share-locked until the session's row commits: a deactivation
    committed first is seen here, one that comes later waits for that commit (its first write is this
    row: ``offboarding.user_deactivate``), so no session is stored after offboarding ended the account.
    Share, not update: uploads of one author do not wait for each other. Django's ORM has no FOR SHARE."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM {User._meta.db_table} WHERE id = %s AND is_active FOR SHARE", [author.pk])
        if cursor.fetchone() is None:
            raise DomainError("authentication_failed", "This account is disabled.", status_code=401)


def _same_key(project: Project, key: str | None) -> Session | None:
    """A repeat of an upload already accepted under this Idempotency-Key (whatever it carries)."""
    return Session.objects.filter(project=project, idempotency_key=key).first() if key else None


def _duplicate_of(project: Project, metadata: dict[str, Any], digest: str) -> Session | None:
    """The checkpoint this upload repeats, or None; 409 for a *different* upload of it.

    A repeat is the same commit's checkpoint from the same agent session and segment end, with the
    same bytes. A transcript file only grows, so a segment has one content: other bytes for it
    (under a new Idempotency-Key) are a conflict, never answered with the session stored before
    as if the new bytes had been kept.
    """
    same = _checkpoint_of(project, metadata) if metadata["kind"] == Kind.CHECKPOINT else None
    if same is not None and same.raw_sha256 and same.raw_sha256 != digest:
        start, end = metadata.get("start_offset") or 0, metadata.get("end_offset")
        raise _conflict(
            same,
            f"Bytes {start}-{end} of agent session {metadata['agent_session_id']} were already uploaded "
            "with other content.",
            "transcript",
        )
    return same


def _checkpoint_of(project: Project, metadata: dict[str, Any]) -> Session | None:
    """The commit's checkpoint if it holds the same segment end; 409 if another upload holds it."""
    found = Session.objects.filter(project=project, kind=Kind.CHECKPOINT, commit_hash=metadata["commit_hash"]).first()
    if found is None:
        return None
    if (found.agent_session_id, found.end_offset) == (metadata["agent_session_id"], metadata.get("end_offset")):
        return found
    raise _conflict(found, f"Commit {metadata['commit_hash'][:12]} already has a checkpoint session.", "commit_hash")


def _conflict(existing: Session, message: str, field: str) -> DomainError:
    return DomainError(
        "conflict",
        message,
        field=field,
        status_code=409,
        extra={"url": session_api_url(existing), "id": str(existing.pk)},
    )


@dataclass(frozen=True)
class Measured:
    total: int  # decompressed bytes of every part
    sizes: list[int]  # of each sub-agent part
    digest: str  # SHA-256 of the decompressed transcript part


def _measure(upload: Upload, limit: int, digest: Any = None) -> int:
    """Decompressed size of one part, validating its gzip framing on the way."""
    size = 0
    try:
        for piece in blobs.gunzip_bounded(upload.stream, limit):
            size += len(piece)
            if digest is not None:
                digest.update(piece)
    except blobs.TooLarge as exc:
        raise DomainError.too_large(f"Upload refused: {exc}.", limit=exc.limit, field="transcript") from None
    except blobs.TooManyMembers as exc:
        raise DomainError(
            "too_many_members",
            f"Upload refused: {exc}.",
            field="transcript",
            status_code=413,
            extra={"limit": exc.limit},
        ) from None
    except blobs.NotGzip as exc:
        raise DomainError("invalid_gzip", f"Upload refused: {exc}.", field="transcript") from None
    upload.stream.seek(0)
    return size


def _measure_all(transcript: Upload, subagents: list[Upload]) -> Measured:
    limit, digest = settings.SESSIONLEDGER_MAX_RAW_BYTES, hashlib.sha256()
    total = _measure(transcript, limit, digest)
    sizes = []
    for part in subagents:
        sizes.append(_measure(part, limit - total))
        total += sizes[-1]
    return Measured(total, sizes, digest.hexdigest())


def _new_session(
    project: Project, author: User, metadata: dict[str, Any], key: str | None, measured: Measured
) -> Session:
    session_id = uuid.uuid4()
    fields = {name: metadata.get(name) for name in _COPIED_FIELDS if metadata.get(name) is not None}
    fields["captured_at"] = _session_date(metadata.get("captured_at"))
    return Session(
        id=session_id,
        project=project,
        author=author,
        idempotency_key=key or None,
        status=Status.PROCESSING,
        requested_status=metadata.get("status") or Status.COMPLETE,
        raw_storage_key=blobs.raw_key(project.pk, session_id),
        raw_size_bytes=measured.total,
        raw_sha256=measured.digest,
        previous=_previous_segment(project, metadata),
        title=_provisional_title(metadata),
        **fields,
    )


def _session_date(captured_at: datetime | None) -> datetime:
    """The session's date: when the client says the conversation happened (after ``import`` or an
    offline queue, long before the upload), else now; a client clock ahead of ours is capped at now."""
    now = timezone.now()
    return min(captured_at, now) if captured_at is not None else now


def _provisional_title(metadata: dict[str, Any]) -> str:
    """Until processing finds the first prompt, lists show the commit's subject (or the task id)."""
    subject = (metadata.get("commit_message") or "").split("\n", 1)[0].strip()
    return (subject or metadata.get("task_id") or "")[:200]


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
        session.subagents.append(parts.stored_entry(part, key, size, offsets.get(part.agent_id, {})))
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

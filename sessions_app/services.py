"""Writes that remove what a session stored: one session deleted, and the blobs it leaves behind.

Ingest writes blobs first and the row second (``sessions_app.ingest``); deletion mirrors it: the
row goes first, in a transaction that also records its blob keys as ``BlobDeletion`` rows, and the
blobs are deleted once that transaction commits. Storage down at that moment leaves the pending
keys, which ``blob_deletions_retry`` (hourly, with retention) deletes later — a reader never meets
a row without its blobs, and no deleted session's content stays in the bucket untracked.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.db import transaction
from django.db.models import F

from projects import audit_trail
from projects.errors import DomainError
from projects.models import Project
from projects.scoping import unscoped
from sessions_app import blobs
from sessions_app.audit import deletion_logged
from sessions_app.models import BlobDeletion, Session

logger = logging.getLogger(__name__)
RETRY_BATCH = 1000


def session_keys(session: Session) -> list[str]:
    """Every key the session can ever have, written yet or not: the worker may be writing the content
    document while the row is deleted, so its key comes from the ids, not from the row (docs/security.md
    "Erasure"). Sub-agent parts are written at ingest, before the row exists, and listed on it."""
    keys = [
        blobs.raw_key(session.project_id, session.pk),
        blobs.content_key(session.project_id, session.pk),
        session.raw_storage_key,
        session.content_storage_key,
        *(part["key"] for part in session.subagents or []),
    ]
    return list(dict.fromkeys(key for key in keys if key))


def hold_refuses(project: Project, what: str) -> None:
    """A project under legal hold keeps everything (docs/security.md "Audit retention and legal hold"):
    no deletion by anyone until staff release the hold."""
    if project.legal_hold_since is not None:
        message = f"{what} cannot be deleted: project {project.slug} is under legal hold."
        raise DomainError("legal_hold", message, status_code=409)


def session_delete(*, session: Session, by: str, audit: bool = True) -> None:
    """Delete the row (with its search entry) now and its blobs as soon as that is committed.
    ``audit=False``: the caller records the event (retention records one per run)."""
    hold_refuses(session.project, f"Session {session.pk}")
    keys = session_keys(session)
    with transaction.atomic():
        Session.objects.filter(pk=session.pk).delete()
        if audit:
            audit_trail.record(kind="session.deleted", project=session.project, target=f"session {session.pk}")
        BlobDeletion.objects.bulk_create([BlobDeletion(key=key) for key in keys], ignore_conflicts=True)
        transaction.on_commit(lambda: blob_deletions_run(keys))
    deletion_logged(session, by=by)


def blob_deletions_run(keys: Iterable[str]) -> int:
    """Delete these pending blobs; those storage refused stay pending. Returns how many were deleted."""
    keys = list(keys)
    failed = set(blobs.delete_reporting(*keys))
    with unscoped():
        BlobDeletion.objects.filter(key__in=[key for key in keys if key not in failed]).delete()
        BlobDeletion.objects.filter(key__in=failed).update(attempts=F("attempts") + 1)
    if failed:
        logger.warning("%d blob(s) of deleted sessions not deleted yet (storage refused); retried hourly", len(failed))
    return len(keys) - len(failed)


def blob_deletions_retry() -> int:
    """The hourly retry of blobs left behind by deletions while storage was down."""
    with unscoped():
        pending = list(
            BlobDeletion.objects.order_by("attempts", "created_at").values_list("key", flat=True)[:RETRY_BATCH]
        )
    return blob_deletions_run(pending) if pending else 0

"""Deletion that finishes: a whole project (docs/security.md "Erasure"); erasing a person, which
builds on the same two helpers, is ``governance.erasure``.

Both follow ``sessions_app.services.session_delete``: the rows go in one transaction that also
records every blob key in the ``BlobDeletion`` outbox, and the blobs are deleted once it commits;
storage down at that moment leaves the keys pending for the hourly retry. Each writes one audit
event that says it happened, not what was erased.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.db.models import QuerySet

from projects.audit_trail import record
from projects.models import Project
from projects.scoping import unscoped
from sessions_app.models import BlobDeletion, Session
from sessions_app.services import blob_deletions_run, hold_refuses, session_keys

logger = logging.getLogger(__name__)
BATCH = 1000


def blobs_queue(sessions: list[Session]) -> list[str]:
    """Record every blob key ``sessions`` can have in the outbox (inside the deleting transaction)."""
    keys = [key for session in sessions for key in session_keys(session)]
    BlobDeletion.objects.bulk_create([BlobDeletion(key=key) for key in keys], ignore_conflicts=True, batch_size=BATCH)
    return keys


def sessions_locked(queryset: QuerySet[Session]) -> list[Session]:
    """The sessions, locked first: a worker processing one holds its row while it writes its blobs
    (``processing.session_lock``), so this waits for it to commit, before this transaction has locked
    anything the worker's final write needs (the insights rows its trigger updates)."""
    fields = ("pk", "project_id", "raw_storage_key", "content_storage_key", "subagents")
    return list(queryset.select_for_update().only(*fields))


def project_delete(*, project: Project) -> int:
    """Delete the project with every row it owns; its blobs go through the outbox. Returns the
    number of sessions deleted."""
    hold_refuses(project, f"Project {project.slug}")
    with unscoped(), transaction.atomic():
        sessions = sessions_locked(Session.objects.filter(project=project))
        keys = blobs_queue(sessions)
        record(kind="project.deleted", project=project, target=project.slug, detail={"sessions": len(sessions)})
        Project.objects.filter(pk=project.pk).delete()
        transaction.on_commit(lambda: blob_deletions_run(keys))
    logger.info("deleted project %s with %d session(s)", project.slug, len(sessions))
    return len(sessions)

"""Deletion that finishes: a whole project, or a whole person (docs/security.md "Erasure").

Both follow ``sessions_app.services.session_delete``: the rows go in one transaction that also
records every blob key in the ``BlobDeletion`` outbox, and the blobs are deleted once it commits;
storage down at that moment leaves the keys pending for the hourly retry. Each writes one audit
event that says it happened, not what was erased.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db import transaction
from django.db.models import QuerySet

from projects.audit_trail import record
from projects.models import ApiToken, AuditEvent, DeviceGrant, Invitation, Membership, Project, User
from projects.scoping import unscoped
from projects.services import invitations_revoke
from sessions_app.models import AccessLog, BlobDeletion, Session, ShareLink
from sessions_app.offboarding import browser_sessions_end
from sessions_app.services import blob_deletions_run, session_keys

logger = logging.getLogger(__name__)
BATCH = 1000


def _queue_blobs(sessions: list[Session]) -> list[str]:
    keys = [key for session in sessions for key in session_keys(session)]
    BlobDeletion.objects.bulk_create([BlobDeletion(key=key) for key in keys], ignore_conflicts=True, batch_size=BATCH)
    return keys


def _locked_blob_fields(queryset: QuerySet[Session]) -> QuerySet[Session]:
    """The sessions, locked first: a worker processing one holds its row while it writes its blobs
    (``processing.session_lock``), so this waits for it to commit, before this transaction has locked
    anything the worker's final write needs (the insights rows its trigger updates)."""
    return queryset.select_for_update().only("pk", "project_id", "raw_storage_key", "content_storage_key", "subagents")


def project_delete(*, project: Project) -> int:
    """Delete the project with every row it owns; its blobs go through the outbox. Returns the
    number of sessions deleted."""
    with unscoped(), transaction.atomic():
        sessions = list(_locked_blob_fields(Session.objects.filter(project=project)))
        keys = _queue_blobs(sessions)
        record(kind="project.deleted", project=project, target=project.slug, detail={"sessions": len(sessions)})
        Project.objects.filter(pk=project.pk).delete()
        transaction.on_commit(lambda: blob_deletions_run(keys))
    logger.info("deleted project %s with %d session(s)", project.slug, len(sessions))
    return len(sessions)


@dataclass(frozen=True)
class Erased:
    sessions: int
    access_log_rows: int


def user_erase(*, user: User) -> Erased:
    """Erase a person across projects: the sessions they uploaded (prompts, content, attribution and
    the share links to them), their access-log rows, tokens, device logins, share links, memberships,
    the invitations to them (those they sent are revoked) and the account. Their name in earlier
    audit events is replaced by a pseudonym; one new event records that an erasure happened."""
    pseudonym = f"erased user #{user.pk}"
    with unscoped(), transaction.atomic():
        sessions = list(_locked_blob_fields(Session.objects.filter(author=user)))
        keys = _queue_blobs(sessions)
        Session.objects.filter(pk__in=[s.pk for s in sessions]).delete()
        read_rows, _ = AccessLog.objects.filter(user=user).delete()
        ShareLink.objects.filter(created_by=user).delete()
        ApiToken.objects.filter(user=user).delete()
        DeviceGrant.objects.filter(approved_by=user).delete()
        Membership.objects.filter(user=user).delete()
        Invitation.objects.filter(email__iexact=user.email).delete()
        invitations_revoke(sent_by=user)
        AuditEvent.objects.filter(actor_id=user.pk).update(actor_email=pseudonym)
        AuditEvent.objects.filter(target__iexact=user.email).update(target=pseudonym)
        browser_sessions_end(user)
        record(kind="user.erased", target=pseudonym)
        User.objects.filter(pk=user.pk).delete()
        transaction.on_commit(lambda: blob_deletions_run(keys))
    return Erased(sessions=len(sessions), access_log_rows=read_rows)

"""Erasing a person (docs/security.md "Erasure"): every row about them and every blob of the sessions
they uploaded, in one transaction whose blob keys go through the deletion outbox as a project's do
(``sessions_app.deletion``). One audit event says it happened, not what was erased.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from governance.integrity import pseudonymise as audit_pseudonymise
from governance.offboarding import browser_sessions_end
from projects.audit_trail import record
from projects.models import ApiToken, DeviceGrant, Invitation, Membership, User
from projects.scoping import unscoped
from projects.services import invitations_revoke
from sessions_app.deletion import blobs_queue, sessions_locked
from sessions_app.models import AccessLog, Session, ShareLink
from sessions_app.services import blob_deletions_run


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
        sessions = sessions_locked(Session.objects.filter(author=user))
        keys = blobs_queue(sessions)
        Session.objects.filter(pk__in=[s.pk for s in sessions]).delete()
        read_rows, _ = AccessLog.objects.filter(user=user).delete()
        ShareLink.objects.filter(created_by=user).delete()
        ApiToken.objects.filter(user=user).delete()
        DeviceGrant.objects.filter(approved_by=user).delete()
        Membership.objects.filter(user=user).delete()
        Invitation.objects.filter(email__iexact=user.email).delete()
        invitations_revoke(sent_by=user)
        audit_pseudonymise(user_id=user.pk, email=user.email)  # the runtime login may not UPDATE them
        browser_sessions_end(user)
        record(kind="user.erased", target=pseudonym)
        User.objects.filter(pk=user.pk).delete()
        transaction.on_commit(lambda: blob_deletions_run(keys))
    return Erased(sessions=len(sessions), access_log_rows=read_rows)

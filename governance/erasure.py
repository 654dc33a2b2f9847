"""Erasing a person (docs/security.md "Erasure"): every row about them and every blob of the sessions
they uploaded, in one transaction whose blob keys go through the deletion outbox as a project's do
(``sessions_app.deletion``). One audit event says it happened, not what was erased. A person with
anything in a project under legal hold is not erased at all (``governance.holds``): the hold keeps the
record whole, and a partial erasure would leave the person neither erased nor held.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.contrib.admin.models import LogEntry
from django.db import transaction
from django.db.models import Q

from governance.holds import held_projects_of
from governance.integrity import pseudonymise as audit_pseudonymise
from governance.offboarding import browser_sessions_end
from projects.audit_trail import record
from projects.errors import DomainError
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
    audit events and in Django admin's change history is replaced by a pseudonym, and the address and
    user agent of the events they acted in, or that name them with no known actor, are cleared; one
    new event records that an erasure happened. Refused, with nothing erased, while a project under
    legal hold holds any of it."""
    pseudonym = f"erased user #{user.pk}"
    held = held_projects_of(user)
    if held:
        raise DomainError(
            "legal_hold",
            f"{user.email} cannot be erased: under legal hold in {', '.join(held)}. Release the hold first.",
            status_code=409,
            extra={"projects": held},
        )
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
        admin_log_scrub(user.email, pseudonym)
        browser_sessions_end(user)
        record(kind="user.erased", target=pseudonym)
        User.objects.filter(pk=user.pk).delete()
        transaction.on_commit(lambda: blob_deletions_run(keys))
    return Erased(sessions=len(sessions), access_log_rows=read_rows)


def admin_log_scrub(email: str, pseudonym: str) -> int:
    """Django admin's change history names objects by their ``str`` (a user, a membership or an
    invitation by the address) and may quote it in the change message: replace the address with the
    pseudonym wherever it appears, whatever its case. Returns how many entries changed."""
    address = re.compile(re.escape(email), re.IGNORECASE)  # a literal: linear
    entries = LogEntry.objects.filter(Q(object_repr__icontains=email) | Q(change_message__icontains=email))
    for entry in entries:
        entry.object_repr = address.sub(pseudonym, entry.object_repr)[:200]
        entry.change_message = address.sub(pseudonym, entry.change_message)
        entry.save(update_fields=["object_repr", "change_message"])
    return len(entries)

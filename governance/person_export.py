"""Everything kept about one person, for their access request (GDPR art. 15; docs/export-format.md
"A person's export"): a zip, streamed like a project's export (``sessions_app.archive``), with a
manifest of SHA-256 checksums.

``account.json`` (the account, its addresses and whether each is verified, its single sign-on
identities), ``memberships.jsonl``, ``invitations.jsonl`` (addressed to them, without tokens),
``tokens.jsonl`` (names, prefixes, scopes and dates; never the hashes), ``sessions.jsonl`` (every
session they authored, in any project, as the API shows it) with each one's stored parts under
``sessions/<id>/``, ``audit.jsonl`` (events they caused or that name them) and ``access_log.jsonl``
(what they read, from where). Staff only: ``manage.py export_person`` and the staff API.
"""

from __future__ import annotations

from collections.abc import Iterator

from allauth.account.models import EmailAddress
from allauth.socialaccount.models import SocialAccount
from django.db.models import Q
from django.http import StreamingHttpResponse
from django.utils import timezone

from projects import audit_trail
from projects.models import ApiToken, AuditEvent, Invitation, Membership, User
from projects.scoping import unscoped
from sessions_app.archive import ArchiveWriter
from sessions_app.export import AUDIT_FIELDS, ROWS, session_blobs
from sessions_app.models import AccessLog, Session
from sessions_app.serializers import ROW_COLUMNS, session_representation

FORMAT = "sessionledger-person"
FORMAT_VERSION = 1


def person_zip(user: User) -> Iterator[bytes]:
    """The person's zip, chunk by chunk; reads across projects (staff's view)."""
    writer = ArchiveWriter(now=timezone.now())
    counts: dict[str, int] = {}
    with unscoped():
        account = {
            "email": user.email,
            "name": user.name,
            "date_joined": user.date_joined,
            "last_login": user.last_login,
            "is_active": user.is_active,
            "is_staff": user.is_staff,
            "is_superuser": user.is_superuser,
            "addresses": list(EmailAddress.objects.filter(user=user).values("email", "verified", "primary")),
            "sso_identities": list(
                SocialAccount.objects.filter(user=user).values("provider", "uid", "date_joined", "last_login")
            ),
        }
        yield from writer.document("account.json", account)
        memberships = Membership.objects.filter(user=user).order_by("created_at", "pk")
        counts["memberships"] = yield from writer.lines(
            "memberships.jsonl", memberships.values("project__slug", "role", "created_at").iterator(ROWS)
        )
        invitations = Invitation.objects.filter(email__iexact=user.email).order_by("created_at", "pk")
        counts["invitations"] = yield from writer.lines(
            "invitations.jsonl",
            invitations.values(
                "project__slug", "role", "invited_by__email", "created_at", "expires_at", "accepted_at", "revoked_at"
            ).iterator(ROWS),
        )
        tokens = ApiToken.objects.filter(user=user).order_by("created_at", "pk")
        counts["tokens"] = yield from writer.lines(
            "tokens.jsonl",
            tokens.values(
                "name", "prefix", "project__slug", "scopes", "created_at", "expires_at", "last_used_at", "revoked_at"
            ).iterator(ROWS),
        )
        sessions = Session.objects.filter(author=user).order_by("captured_at", "id")
        counts["sessions"] = yield from writer.lines(
            "sessions.jsonl",
            (
                session_representation(row, row["project__slug"])
                for row in sessions.values(*ROW_COLUMNS, "project__slug").iterator(ROWS)
            ),
        )
        events = AuditEvent.objects.filter(
            Q(actor_id=user.pk) | Q(actor_email__iexact=user.email) | Q(target__iexact=user.email)
        ).order_by("at", "pk")
        counts["audit_events"] = yield from writer.lines("audit.jsonl", events.values(*AUDIT_FIELDS).iterator(ROWS))
        reads = AccessLog.objects.filter(user=user).order_by("hour", "pk")
        counts["access_log"] = yield from writer.lines(
            "access_log.jsonl",
            reads.values("project__slug", "session_id", "at", "hour", "count", "via", "ip", "user_agent").iterator(
                ROWS
            ),
        )
        counts["blobs"] = yield from session_blobs(writer, sessions)
    yield from writer.finish(
        {"format": FORMAT, "format_version": FORMAT_VERSION, "person": {"email": user.email}, "counts": counts}
    )


def person_export_recorded(user: User) -> None:
    audit_trail.record(kind=audit_trail.PERSON_EXPORTED, target=user.email)


def person_download(user: User) -> StreamingHttpResponse:
    """The person's zip as a streamed attachment; the audit trail records who took it."""
    person_export_recorded(user)
    response = StreamingHttpResponse(person_zip(user), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="person-{user.pk}-export.zip"'
    return response

"""Offboarding: a deactivated user loses every access at once (docs/security.md "Offboarding").

``user_deactivate`` is the one function every path calls — Django admin, the staff API,
``manage.py deactivate_user`` and SCIM (``governance.scim``). In one transaction it marks the user
inactive, revokes their API tokens (and the tokens minted with them), denies the device logins
they approved but the CLI has not collected yet, revokes every share link they created, removes
their memberships, revokes the invitations they sent that nobody accepted yet, ends their browser
sessions, and records one ``user.deactivated`` event counting each. What they uploaded stays the
project's: sessions keep their rows and blobs (erasing a person is ``governance.erasure``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from django.contrib.sessions.models import Session as BrowserSession
from django.db import transaction
from django.utils import timezone

from projects.audit_trail import record
from projects.models import ApiToken, DeviceGrant, Membership, User
from projects.scoping import unscoped
from projects.services import invitations_revoke, token_revoke
from sessions_app.models import ShareLink

BROWSER_SESSION_BATCH = 2000


@dataclass(frozen=True)
class Offboarded:
    """What offboarding ended, counted: the answer of the staff API and the ``user.deactivated`` event's detail."""

    tokens: int
    device_grants: int
    share_links: int
    memberships: int
    invitations: int
    browser_sessions: int


@transaction.atomic
def user_deactivate(*, user: User, audit: bool = True) -> Offboarded:
    """End every access of ``user`` now and record it (``user.deactivated``, with what was ended: the
    request being served or ``acting`` says who and how); idempotent (a second call finds nothing left
    to end). ``audit=False``: the caller records one event of its own with what this returns (SCIM's
    DELETE, ``user.deleted``)."""
    with unscoped():
        User.objects.filter(pk=user.pk).update(is_active=False)
        user.is_active = False
        ended = user_credentials_end(user=user)
        memberships = list(Membership.objects.filter(user=user))
        for membership in memberships:  # one by one: the share-link revocation signal sees each
            membership.delete()
    done = replace(ended, memberships=len(memberships))
    if audit:
        record(kind="user.deactivated", target=user.email, detail=asdict(done))
    return done


@transaction.atomic
def user_credentials_end(*, user: User) -> Offboarded:
    """End everything that lets someone act as ``user`` — tokens, device logins, share links, the
    invitations they sent, browser sessions — and leave the account, its memberships and its work
    alone (also what single sign-on does to a squatted account it reclaims, ``governance.sso.account_reclaim``)."""
    now = timezone.now()
    with unscoped():
        live_tokens = list(ApiToken.objects.filter(user=user, revoked_at__isnull=True))
        for token in live_tokens:  # a child is revoked with its parent, and recorded with it
            if ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).exists():
                token_revoke(token=token)
        grants = DeviceGrant.objects.filter(approved_by=user, consumed_at__isnull=True, denied_at__isnull=True).update(
            denied_at=now
        )
        links = ShareLink.objects.filter(created_by=user, revoked_at__isnull=True).update(revoked_at=now)
    return Offboarded(
        tokens=len(live_tokens),
        device_grants=grants,
        share_links=links,
        memberships=0,
        invitations=invitations_revoke(sent_by=user),
        browser_sessions=browser_sessions_end(user),
    )


def browser_sessions_end(user: User) -> int:
    """Delete the user's signed-in browser sessions (an inactive user is refused by the auth backend anyway)."""
    return browser_sessions_end_where(lambda data: str(data.get("_auth_user_id")) == str(user.pk))


def browser_sessions_end_where(ends: Callable[[dict[str, Any]], bool]) -> int:
    """Delete the live browser sessions whose data ``ends`` selects (the database session store holds
    them encoded, so each live one is decoded)."""
    ended = 0
    live = BrowserSession.objects.filter(expire_date__gt=timezone.now()).order_by("pk")
    last = ""
    while batch := list(live.filter(pk__gt=last)[:BROWSER_SESSION_BATCH]):
        chosen = [row.pk for row in batch if ends(row.get_decoded())]
        ended += BrowserSession.objects.filter(pk__in=chosen).delete()[0]
        last = batch[-1].pk
    return ended


def user_reactivate(*, user: User) -> None:
    """Let the user sign in again (SCIM ``active: true``); nothing offboarding ended comes back."""
    with unscoped():
        User.objects.filter(pk=user.pk).update(is_active=True)
    user.is_active = True

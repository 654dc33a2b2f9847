"""Browser sessions' policy (docs/identity.md "Sessions"): how long they last, how long they may idle,
how they were signed in, and how signing out ends the identity provider's session too.

Every sign-in stamps the session (``on_sign_in``, Django's ``user_logged_in``); a sign-in through an
OpenID Provider also keeps what RP-initiated logout needs (governance/oidc.py ``EndSession``). How a
session was signed in is allauth's record (``get_authentication_records``): a ``socialaccount`` entry
is single sign-on; anything else (a password, Django admin's form, a session from before this
policy) is not. ``SessionPolicyMiddleware`` ends, on its next request, a session past its lifetime,
idle too long, or — once SESSIONLEDGER_SSO_REQUIRED is on — not made through single sign-on by a user
who may not use a password.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from allauth.account.authentication import AUTHENTICATION_METHODS_SESSION_KEY, get_authentication_records
from allauth.socialaccount.models import SocialAccount
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import SESSION_KEY, logout
from django.db.models import F, OuterRef, Q, Subquery
from django.http import HttpRequest, HttpResponse
from django_scopes import scopes_disabled

from governance import sso
from governance.offboarding import browser_sessions_end_where
from governance.oidc import EndSession
from projects.models import ApiToken, User
from projects.services import token_revoke

SIGNED_IN_AT = "governance.signed_in_at"
SEEN_AT = "governance.seen_at"
END_SESSION = "governance.end_session"
SEEN_EVERY = 60  # seconds: the idle clock's resolution, so that not every request writes the session


def on_sign_in(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    if request is None or not hasattr(request, "session"):
        return
    now = time.time()
    request.session[SIGNED_IN_AT] = request.session[SEEN_AT] = now
    end_session = getattr(request, "sso_logout", None)
    if isinstance(end_session, EndSession):
        request.session[END_SESSION] = dataclasses.asdict(end_session)
    else:
        request.session.pop(END_SESSION, None)


def made_by_sso(request: HttpRequest) -> bool:
    records = get_authentication_records(request, request.user)  # allauth's, of this user only
    return any(record.get("method") == "socialaccount" for record in records)


def end_session(request: HttpRequest) -> EndSession | None:
    """The provider session to end when this browser session signs out, if it was made through one
    that offers RP-initiated logout."""
    stored = request.session.get(END_SESSION)
    if not isinstance(stored, dict):
        return None
    try:
        return EndSession(**stored)
    except TypeError:  # stored by another version
        return None


def ended_because(request: HttpRequest, now: float) -> str | None:
    """Why this signed-in browser session ends now, if it does."""
    signed_in_at = request.session.setdefault(SIGNED_IN_AT, now)  # sessions from before: the clock starts
    if now - float(signed_in_at) > settings.SESSIONLEDGER_SESSION_HOURS * 3600:
        return "lifetime"
    idle = settings.SESSIONLEDGER_SESSION_IDLE_MINUTES * 60
    if idle:
        seen_at = float(request.session.get(SEEN_AT, now))
        if now - seen_at > idle:
            return "idle"
        if now - seen_at >= SEEN_EVERY or SEEN_AT not in request.session:
            request.session[SEEN_AT] = now
    if sso.sso_required() and not sso.password_allowed(request.user) and not made_by_sso(request):
        return "sso_required"
    return None


ENDED = {
    "lifetime": "Your session has ended: sign in again.",
    "idle": "Your session ended after a while without activity: sign in again.",
    "sso_required": "Sign-in here is now through single sign-on: sign in again.",
}


class SessionPolicyMiddleware:
    """After AuthenticationMiddleware: ends the browser session ``ended_because`` names (bearer-token
    requests carry no session and pass untouched)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if SESSION_KEY in request.session and request.user.is_authenticated:
            reason = ended_because(request, time.time())
            if reason is not None:
                logout(request)
                messages.info(request, ENDED[reason])
        return self.get_response(request)


@dataclass(frozen=True)
class Enforced:
    browser_sessions: int
    tokens: int


def sso_enforce() -> Enforced:
    """What switching SESSIONLEDGER_SSO_REQUIRED on must end at once (``manage.py sso_enforce``): the
    browser sessions not signed in through single sign-on, and the API tokens that cannot have been
    made through it — those of a person with no SSO identity yet, and those created before their first
    SSO sign-in — of everyone who may not use a password (staff may, with SESSIONLEDGER_SSO_STAFF_PASSWORD).
    A token made later from a password session of a person who also used SSO cannot be told apart (tokens
    do not record how their maker signed in): revoke those per person (docs/identity.md)."""
    with scopes_disabled():
        users = User.objects.filter(is_active=True).only("pk", "is_staff")
        kept = {user.pk for user in users.iterator() if sso.password_allowed(user)}

        def ends(data: dict[str, Any]) -> bool:
            user_id = data.get(SESSION_KEY)
            records = data.get(AUTHENTICATION_METHODS_SESSION_KEY) or []
            by_sso = any(isinstance(r, dict) and r.get("method") == "socialaccount" for r in records)
            return user_id is not None and int(user_id) not in kept and not by_sso

        ended = browser_sessions_end_where(ends)
        first_sso = SocialAccount.objects.filter(user=OuterRef("user")).order_by("date_joined").values("date_joined")
        tokens = (
            ApiToken.objects.filter(revoked_at__isnull=True, user__is_active=True)
            .exclude(user_id__in=kept)
            .annotate(first_sso=Subquery(first_sso[:1]))
            .filter(Q(first_sso__isnull=True) | Q(created_at__lt=F("first_sso")))
            .select_related("user", "project")
        )
        revoked = 0
        for token in tokens.order_by("pk"):
            token.refresh_from_db(fields=["revoked_at"])  # revoking a parent revoked its children
            if token.revoked_at is None:
                token_revoke(token=token)
                revoked += 1
    return Enforced(browser_sessions=ended, tokens=revoked)

"""django-allauth's hooks: sign-up, password and single sign-on policies (governance/sso.py)."""

from __future__ import annotations

from typing import Any

from allauth.account.adapter import DefaultAccountAdapter
from allauth.core.exceptions import ImmediateHttpResponse
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter
from allauth.socialaccount.models import SocialLogin
from allauth.socialaccount.providers.base import AuthError, AuthProcess
from django import forms
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.shortcuts import render
from django_scopes import scopes_disabled

from governance import browser_sessions, oidc, sso
from governance.reclaim import account_reclaim
from projects import audit_trail
from projects.addresses import address_verified
from projects.models import Project, Role


class AccountAdapter(DefaultAccountAdapter):  # type: ignore[misc, unused-ignore]  # allauth is untyped
    def is_open_for_signup(self, request: HttpRequest) -> bool:
        return bool(settings.ACCOUNT_ALLOW_SIGNUPS) and not sso.sso_required()

    def authenticate(self, request: HttpRequest, **credentials: Any) -> Any:
        """Under SSO the password form says so, whatever the address (no hint whether it exists)."""
        user = super().authenticate(request, **credentials)
        if sso.sso_required() and (user is None or not sso.password_allowed(user)):
            raise forms.ValidationError(sso.PASSWORD_OFF)
        return user

    def get_logout_redirect_url(self, request: HttpRequest) -> str:
        """Signing out of a session made through a provider with RP-initiated logout goes on to end the
        provider's session, which then sends the browser back to the login page; otherwise signing out
        at once signed the person back in through the provider's still open session."""
        url: str = super().get_logout_redirect_url(request)
        end_session = browser_sessions.end_session(request) if request.user.is_authenticated else None
        if end_session is None:
            return url
        return end_session.url(post_logout_redirect_uri=request.build_absolute_uri(url))


class SocialAccountAdapter(DefaultSocialAccountAdapter):  # type: ignore[misc, unused-ignore]  # allauth is untyped
    def pre_social_login(self, request: HttpRequest, sociallogin: SocialLogin) -> None:
        """Refuse an ID token issued for another login (governance/oidc.py), then an address the
        provider does not prove (its policy: docs/identity.md) or whose domain is not allowed, a
        deactivated account, and a new one when just-in-time creation is off; then take back an account
        the address was squatted with (its main address), or refuse one that holds it, unverified,
        beside another. Each refusal is one audit event naming its reason, and a page saying it."""
        email, reason = _address_of(sociallogin)
        # SAML has no nonce: python3-saml ties the answer to this session's request (InResponseTo).
        if sociallogin.provider.id == "openid_connect" and not oidc.nonce_matches(sociallogin):
            _refused(request, sociallogin, email, "nonce")
            raise PermissionDenied("The ID token does not answer this sign-in.")  # allauth's error page
        reason = reason or _refusal(request, sociallogin, email)
        if (
            reason is None
            and _connects_by_email(sociallogin)
            and not address_verified(user=sociallogin.user, email=email)
        ):
            if str(sociallogin.user.email).strip().lower() != email:
                # An unverified second address on someone else's account: reclaiming would end that
                # account's credentials, but its holder would reset them through their own address
                # and then read everything the real person does under "their" login.
                reason = "unverified_second_address"
            else:
                account_reclaim(user=sociallogin.user, email=email, provider=sociallogin.account.provider)
        if reason is not None:
            _refused(request, sociallogin, email, reason)
            context = {"email": email, "reason": reason}
            raise ImmediateHttpResponse(render(request, "account/sso_refused.html", context, status=403))

    def on_authentication_error(
        self,
        request: HttpRequest,
        provider: Any,
        error: Any = None,
        exception: Exception | None = None,
        extra_context: Any = None,
    ) -> None:
        """The provider's answer was not accepted before any address was read — a SAML assertion altered,
        expired, replayed or for another audience, an OpenID state that does not match — or the person
        cancelled: one ``sso.login_refused`` naming why, and (but for a cancel) a page saying it."""
        if isinstance(exception, PermissionDenied):  # our own refusal (the nonce): recorded where it was made
            return
        reason = "cancelled" if error == AuthError.CANCELLED else "provider_error"
        detail = {"provider": getattr(provider, "sub_id", None) or provider.id, "reason": reason, "error": str(error)}
        if exception is not None:
            detail["exception"] = type(exception).__name__
        audit_trail.record(request, kind=audit_trail.SSO_LOGIN_REFUSED, target="", detail=detail)
        if reason != "cancelled":  # allauth's own page says a cancelled sign-in was cancelled
            context = {"email": "", "reason": reason}
            raise ImmediateHttpResponse(render(request, "account/sso_refused.html", context, status=401))

    def is_open_for_signup(self, request: HttpRequest, sociallogin: SocialLogin) -> bool:
        """Just-in-time creation of the accounts the provider vouches for (SESSIONLEDGER_SSO_JIT)."""
        return bool(settings.SESSIONLEDGER_SSO_JIT)

    def save_user(self, request: HttpRequest, sociallogin: SocialLogin, form: Any = None) -> Any:
        user = super().save_user(request, sociallogin, form)  # audited as user.jit_created (auth_events)
        slug = sso.default_project_slug(user.email)
        if slug:
            from projects.services import membership_add

            with scopes_disabled():
                project = Project.objects.filter(slug=slug, archived_at__isnull=True).first()
                if project is not None:
                    membership_add(project=project, user=user, role=Role.MEMBER)
        return user


def _refused(request: HttpRequest, sociallogin: SocialLogin, email: str, reason: str) -> None:
    audit_trail.record(
        request,
        kind=audit_trail.SSO_LOGIN_REFUSED,
        target=email,
        detail={"provider": sociallogin.account.provider, "reason": reason},
    )


def _refusal(request: HttpRequest, sociallogin: SocialLogin, email: str) -> str | None:
    """Why a proven address cannot sign in: its domain, a deactivated account, or no account to sign in
    to while just-in-time creation is off (allauth's "Sign Up Closed" page otherwise)."""
    if not sso.domain_allowed(email, _setting(request, sociallogin, "domains")):
        return "domain"
    if sociallogin.is_existing and not sociallogin.user.is_active:
        return "inactive"
    if not sociallogin.is_existing and not _connecting(sociallogin) and not settings.SESSIONLEDGER_SSO_JIT:
        return "jit_off"
    return None


def _setting(request: HttpRequest, sociallogin: SocialLogin, key: str) -> Any:
    """One of the signing-in provider's policy settings (config/settings.py ``OIDC_POLICY_KEYS``)."""
    return sociallogin.account.get_provider(request).app.settings.get(key)


def _connecting(sociallogin: SocialLogin) -> bool:
    """A signed-in account's holder connecting an identity from their settings: no account is made."""
    return bool(sociallogin.state.get("process") == AuthProcess.CONNECT)


def _connects_by_email(sociallogin: SocialLogin) -> bool:
    """allauth found an existing account by this login's address and is about to connect the two
    (SOCIALACCOUNT_EMAIL_AUTHENTICATION_AUTO_CONNECT): the identity is not stored yet. Connecting from
    a signed-in account's settings is not this: there the account's own holder asks."""
    by_email = sociallogin.is_existing and sociallogin.account.pk is None
    return bool(by_email) and not _connecting(sociallogin)


def _address_of(sociallogin: SocialLogin) -> tuple[str, str | None]:
    """The provider's address, and why it cannot sign in, if it cannot: none sent (``no_email``), or
    one the provider's policy does not count as proven (``unverified_email``, governance/oidc.py)."""
    for address in sociallogin.email_addresses:
        if address.verified:
            return str(address.email).strip().lower(), None
    for address in sociallogin.email_addresses:
        return str(address.email).strip().lower(), "unverified_email"
    return "", "no_email"

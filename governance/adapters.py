"""django-allauth's hooks: sign-up, password and single sign-on policies (governance/sso.py)."""

from __future__ import annotations

from typing import Any

from allauth.account.adapter import DefaultAccountAdapter
from allauth.core.exceptions import ImmediateHttpResponse
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter
from allauth.socialaccount.models import SocialLogin
from allauth.socialaccount.providers.base import AuthProcess
from django import forms
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.shortcuts import render
from django_scopes import scopes_disabled

from governance import oidc, sso
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


class SocialAccountAdapter(DefaultSocialAccountAdapter):  # type: ignore[misc, unused-ignore]  # allauth is untyped
    def pre_social_login(self, request: HttpRequest, sociallogin: SocialLogin) -> None:
        """Refuse an ID token issued for another login (governance/oidc.py), then an address whose
        domain is not allowed; then take back an account the address was squatted with (its main
        address), or refuse one that holds it, unverified, beside another."""
        email = _email_of(sociallogin)
        # SAML has no nonce: python3-saml ties the answer to this session's request (InResponseTo).
        if sociallogin.provider.id == "openid_connect" and not oidc.nonce_matches(sociallogin):
            _refused(request, sociallogin, email, "nonce")
            raise PermissionDenied("The ID token does not answer this sign-in.")  # allauth's error page
        if not sso.domain_allowed(email):
            _refused(request, sociallogin, email, "domain")
            response = render(request, "account/sso_refused.html", {"email": email}, status=403)
            raise ImmediateHttpResponse(response)
        if _connects_by_email(sociallogin) and not address_verified(user=sociallogin.user, email=email):
            if str(sociallogin.user.email).strip().lower() != email:
                # An unverified second address on someone else's account: reclaiming would end that
                # account's credentials, but its holder would reset them through their own address
                # and then read everything the real person does under "their" login.
                _refused(request, sociallogin, email, "unverified_second_address")
                context = {"email": email, "reason": "unverified_second_address"}
                raise ImmediateHttpResponse(render(request, "account/sso_refused.html", context, status=403))
            account_reclaim(user=sociallogin.user, email=email, provider=sociallogin.account.provider)

    def is_open_for_signup(self, request: HttpRequest, sociallogin: SocialLogin) -> bool:
        """Just-in-time creation of the accounts the provider vouches for (SESSIONLEDGER_SSO_JIT)."""
        return bool(settings.SESSIONLEDGER_SSO_JIT)

    def save_user(self, request: HttpRequest, sociallogin: SocialLogin, form: Any = None) -> Any:
        user = super().save_user(request, sociallogin, form)
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


def _connects_by_email(sociallogin: SocialLogin) -> bool:
    """allauth found an existing account by this login's address and is about to connect the two
    (SOCIALACCOUNT_EMAIL_AUTHENTICATION_AUTO_CONNECT): the identity is not stored yet. Connecting from
    a signed-in account's settings is not this: there the account's own holder asks."""
    by_email = sociallogin.is_existing and sociallogin.account.pk is None
    return bool(by_email) and sociallogin.state.get("process") != AuthProcess.CONNECT


def _email_of(sociallogin: SocialLogin) -> str:
    """The address the provider verified; an unverified one counts as none."""
    for address in sociallogin.email_addresses:
        if address.verified:
            return str(address.email).strip().lower()
    return ""

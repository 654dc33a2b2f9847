"""Single sign-on policies (docs/security.md "Single sign-on"): who may sign in, and how.

OpenID Connect itself is django-allauth's ``openid_connect`` provider (config/settings.py); the hooks
that apply these policies are in governance/adapters.py. When SSO is required, passwords are refused by
the authentication backends themselves, so Django admin's login page and allauth's agree.
"""

from __future__ import annotations

from typing import Any

from allauth.account.auth_backends import AuthenticationBackend
from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.http import HttpRequest

PASSWORD_OFF = "Password sign-in is off here: sign in with single sign-on."


def sso_required() -> bool:
    return bool(settings.SESSIONLEDGER_SSO_REQUIRED)


def password_allowed(user: Any) -> bool:
    """Whether ``user`` may sign in with a password (only staff, and only if configured, under SSO)."""
    if not sso_required():
        return True
    return bool(settings.SESSIONLEDGER_SSO_STAFF_PASSWORD and getattr(user, "is_staff", False))


def domain_of(email: str) -> str:
    return email.rpartition("@")[2].strip().lower()


def domain_allowed(email: str, provider_domains: list[str] | None = None) -> bool:
    """A provider's own ``domains`` (docs/identity.md), else SESSIONLEDGER_SSO_DOMAINS; an empty list
    allows every domain the provider vouches for."""
    domains = settings.SESSIONLEDGER_SSO_DOMAINS if provider_domains is None else provider_domains
    return bool(email) and (not domains or domain_of(email) in domains)


def default_project_slug(email: str) -> str | None:
    slug = settings.SESSIONLEDGER_SSO_DEFAULT_PROJECTS.get(domain_of(email))
    return str(slug) if slug else None


class PasswordBackend(ModelBackend):
    def authenticate(self, request: HttpRequest | None, *args: Any, **kwargs: Any) -> Any:
        user = super().authenticate(request, *args, **kwargs)
        return user if user is not None and password_allowed(user) else None


class AllauthPasswordBackend(AuthenticationBackend):  # type: ignore[misc, unused-ignore]  # allauth is untyped
    def authenticate(self, request: HttpRequest | None, **credentials: Any) -> Any:
        user = super().authenticate(request, **credentials)
        return user if user is not None and password_allowed(user) else None


def context(request: HttpRequest) -> dict[str, bool]:
    """Templates' ``SSO_REQUIRED``: the login page then offers only the providers."""
    return {"SSO_REQUIRED": sso_required()}

"""Authentication and privilege events (docs/security.md "Audit trail"), from the signals every path sends.

Django's ``user_logged_in``/``user_logged_out``/``user_login_failed`` are sent by Django admin's login
and allauth's alike, so each sign-in, sign-out and refused password writes one event whatever page it
came through; allauth's signals name password changes, resets and accounts created on a first single
sign-on login; a change of ``is_staff``/``is_superuser`` (or reactivation), of Django permissions or
groups, is seen on the ``User`` row itself, so Django admin, a command or a shell all write it.
Deactivation is not here: every path goes through ``governance.offboarding.user_deactivate``, which
records it with what it ended.
"""

from __future__ import annotations

from typing import Any

from allauth.account import signals as account_signals
from allauth.account.authentication import get_authentication_records
from django.contrib.auth import signals as auth_signals
from django.contrib.auth.models import Permission
from django.db.models import signals as model_signals
from django.http import HttpRequest

from governance import sso
from projects.audit_trail import record
from projects.models import User

PRIVILEGES = ("is_staff", "is_superuser")
_BEFORE = "_audit_flags_before"


def login_method(request: HttpRequest | None, user: User) -> str:
    """``sso:<provider>`` when allauth's latest authentication step in this session was a provider's
    (recorded before the login itself), else ``password``: the only other way into a browser session."""
    records = get_authentication_records(request, user) if request is not None and hasattr(request, "session") else []
    latest = records[-1] if records else {}
    if latest.get("method") == "socialaccount":
        return f"sso:{latest.get('provider', '')}"
    return "password"


def _logged_in(sender: Any, request: HttpRequest | None, user: User, **kwargs: Any) -> None:
    record(request, kind="auth.login", actor=user, target=user.email, detail={"method": login_method(request, user)})


def _logged_out(sender: Any, request: HttpRequest | None, user: User | None, **kwargs: Any) -> None:
    if isinstance(user, User):
        record(request, kind="auth.logout", actor=user, target=user.email)


def failure_reason(email: str) -> str:
    """Why a password sign-in failed, as far as the server can tell without the password (the signal
    gets it masked): no such account, a deactivated one, passwords off for it under SSO, else the
    password itself."""
    user = User.objects.filter(email__iexact=email).first() if email else None
    if user is None:
        return "unknown_account"
    if not user.is_active:
        return "inactive"
    if not sso.password_allowed(user):
        return "sso_required"
    return "wrong_password"


def _login_failed(sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **kwargs: Any) -> None:
    # Django admin's form sends "username", allauth's "email"; both are the address typed (hostile text).
    email = str(credentials.get("email") or credentials.get("username") or "").strip().lower()[:254]
    detail = {"method": "password", "reason": failure_reason(email)}
    record(request, kind="auth.login_failed", target=email, detail=detail)


def _password_changed(sender: Any, request: HttpRequest, user: User, **kwargs: Any) -> None:
    record(request, kind="auth.password_changed", actor=user, target=user.email, detail={"how": "changed"})


def _password_set(sender: Any, request: HttpRequest, user: User, **kwargs: Any) -> None:
    record(request, kind="auth.password_changed", actor=user, target=user.email, detail={"how": "set"})


def _password_reset(sender: Any, request: HttpRequest, user: User, **kwargs: Any) -> None:
    record(request, kind="auth.password_reset", actor=user, target=user.email)


def _signed_up(sender: Any, request: HttpRequest, user: User, **kwargs: Any) -> None:
    sociallogin = kwargs.get("sociallogin")
    if sociallogin is None:  # a password sign-up is not just-in-time creation
        return
    detail = {"provider": sociallogin.account.provider}
    record(request, kind="user.jit_created", actor=user, target=user.email, detail=detail)


def _flags_before(sender: Any, instance: User, update_fields: Any = None, **kwargs: Any) -> None:
    watched = (*PRIVILEGES, "is_active")
    if instance.pk is None or (update_fields is not None and not set(update_fields) & set(watched)):
        return  # a login's last_login, a password: nothing to compare, no query
    setattr(instance, _BEFORE, User.objects.filter(pk=instance.pk).values(*watched).first())


def _flags_after(sender: Any, instance: User, created: bool, **kwargs: Any) -> None:
    before = {name: False for name in PRIVILEGES} if created else getattr(instance, _BEFORE, None)
    if before is None:
        return
    if hasattr(instance, _BEFORE):
        delattr(instance, _BEFORE)
    changes = {
        name: {"from": before[name], "to": getattr(instance, name)}
        for name in PRIVILEGES
        if before[name] != getattr(instance, name)
    }
    if changes:
        record(kind="user.privileges_changed", target=instance.email, detail=changes)
    if not created and before.get("is_active") is False and instance.is_active:
        record(kind="user.reactivated", target=instance.email)


def _grants_changed(sender: Any, instance: Any, action: str, model: Any, pk_set: Any, **kwargs: Any) -> None:
    """Django permissions or groups given to or taken from a user (Django admin's form, ``.add()``):
    a grant of admin powers as real as ``is_staff``. One event per add or remove."""
    if action not in ("post_add", "post_remove") or not pk_set or not isinstance(instance, User):
        return
    if model is Permission:
        names = sorted(f"{p.content_type.app_label}.{p.codename}" for p in model.objects.filter(pk__in=pk_set))
        field = "permissions"
    else:
        names, field = sorted(model.objects.filter(pk__in=pk_set).values_list("name", flat=True)), "groups"
    added, removed = (names, []) if action == "post_add" else ([], names)
    record(kind="user.privileges_changed", target=instance.email, detail={field: {"added": added, "removed": removed}})


def connect() -> None:
    """Called once by ``GovernanceConfig.ready``."""
    auth_signals.user_logged_in.connect(_logged_in, dispatch_uid="audit_login")
    auth_signals.user_logged_out.connect(_logged_out, dispatch_uid="audit_logout")
    auth_signals.user_login_failed.connect(_login_failed, dispatch_uid="audit_login_failed")
    account_signals.password_changed.connect(_password_changed, dispatch_uid="audit_password_changed")
    account_signals.password_set.connect(_password_set, dispatch_uid="audit_password_set")
    account_signals.password_reset.connect(_password_reset, dispatch_uid="audit_password_reset")
    account_signals.user_signed_up.connect(_signed_up, dispatch_uid="audit_signed_up")
    model_signals.pre_save.connect(_flags_before, sender=User, dispatch_uid="audit_flags_before")
    model_signals.post_save.connect(_flags_after, sender=User, dispatch_uid="audit_flags_after")
    for through in (User.user_permissions.through, User.groups.through):
        model_signals.m2m_changed.connect(_grants_changed, sender=through, dispatch_uid=f"audit_{through.__name__}")

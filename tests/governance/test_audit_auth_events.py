"""Sign-ins, sign-outs, refused passwords, password changes and resets, privilege changes in Django admin,
accounts created on a first single sign-on and device logins each write exactly one audit event, through
the real flows: allauth's pages, Django admin's forms, the suite's OpenID Provider, the device API."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Permission
from django.core import mail
from django.test import Client
from rest_framework.test import APIClient

from projects import device
from projects.models import User
from tests.factories import UserFactory
from tests.governance.sso_provider import PROVIDER_ID, authorize, configure, oidc_provider, sso_sign_in  # noqa: F401 (fixture)
from tests.governance.test_audit_trail import exactly_one

PASSWORD = "pw-for-tests-1"
ADDRESS = {"REMOTE_ADDR": "203.0.113.9", "HTTP_USER_AGENT": "audit-browser/2.0"}


def browser() -> Client:
    return Client(**ADDRESS)


def test_a_password_sign_in_is_one_login_event_with_its_method_and_address(world) -> None:
    client = browser()
    event = exactly_one(
        "auth.login", lambda: client.post("/accounts/login/", {"login": world.member.email, "password": PASSWORD})
    )
    assert client.session["_auth_user_id"] == str(world.member.pk)
    assert (event.actor_email, event.target, event.detail) == (
        world.member.email,
        world.member.email,
        {"method": "password"},
    )
    assert (event.via, event.ip, event.user_agent) == ("web", "203.0.113.9", "audit-browser/2.0")


def test_a_django_admin_sign_in_is_a_password_login_through_admin(world) -> None:
    staff = UserFactory(email="ops@example.com", is_staff=True)
    client = browser()
    event = exactly_one(
        "auth.login", lambda: client.post("/admin/login/", {"username": staff.email, "password": PASSWORD})
    )
    assert (event.actor_email, event.detail, event.via) == (staff.email, {"method": "password"}, "admin")


@pytest.mark.parametrize(
    ("who", "password", "reason"),
    [
        ("mallory@example.com", "not-the-password", "wrong_password"),
        ("nobody@example.com", PASSWORD, "unknown_account"),
        ("mallory@example.com", PASSWORD, "inactive"),
    ],
)
def test_a_refused_password_is_one_failed_login_naming_the_address_and_why(world, who, password, reason) -> None:
    if reason == "inactive":
        User.objects.filter(pk=world.member.pk).update(is_active=False)
    client = browser()
    event = exactly_one(
        "auth.login_failed", lambda: client.post("/accounts/login/", {"login": who.upper(), "password": password})
    )
    assert "_auth_user_id" not in client.session
    assert (event.actor_email, event.target) == ("", who)
    assert event.detail == {"method": "password", "reason": reason}
    assert event.ip == "203.0.113.9"


def test_a_password_refused_because_sso_is_required_says_so(world, settings) -> None:
    settings.SESSIONLEDGER_SSO_REQUIRED = True
    settings.SESSIONLEDGER_SSO_STAFF_PASSWORD = False
    event = exactly_one(
        "auth.login_failed",
        lambda: browser().post("/accounts/login/", {"login": world.member.email, "password": PASSWORD}),
    )
    assert event.detail == {"method": "password", "reason": "sso_required"}


def test_a_wrong_password_in_django_admin_is_a_failed_login(world) -> None:
    event = exactly_one(
        "auth.login_failed",
        lambda: browser().post("/admin/login/", {"username": world.admin.email, "password": "guess"}),
    )
    assert (event.target, event.detail["reason"], event.via) == (world.admin.email, "wrong_password", "admin")


def test_signing_out_is_one_logout_event(world) -> None:
    client = browser()
    client.force_login(world.member)
    event = exactly_one("auth.logout", lambda: client.post("/accounts/logout/"))
    assert "_auth_user_id" not in client.session
    assert (event.actor_email, event.target, event.ip) == (world.member.email, world.member.email, "203.0.113.9")


def test_changing_ones_password_is_recorded_without_the_password(world) -> None:
    client = browser()
    client.force_login(world.member)
    new = "A-new-pass-phrase-42"
    event = exactly_one(
        "auth.password_changed",
        lambda: client.post(
            "/accounts/password/change/", {"oldpassword": PASSWORD, "password1": new, "password2": new}
        ),
    )
    assert (event.actor_email, event.target, event.detail) == (
        world.member.email,
        world.member.email,
        {"how": "changed"},
    )
    assert new not in str(event.detail) and PASSWORD not in str(event.detail)


def test_resetting_a_password_by_mail_is_recorded_for_the_account(world) -> None:
    client = browser()
    client.post("/accounts/password/reset/", {"email": world.member.email})
    [message] = mail.outbox
    link = re.search(r"http://testserver(/accounts/password/reset/key/\S+/)", message.body)
    assert link is not None, message.body
    form = client.get(link.group(1))
    assert form.status_code == 302  # allauth moves the key out of the URL first
    new = "Reset-pass-phrase-77"
    event = exactly_one(
        "auth.password_reset", lambda: client.post(form["Location"], {"password1": new, "password2": new})
    )
    assert (event.actor_email, event.target) == (world.member.email, world.member.email)
    assert User.objects.get(pk=world.member.pk).check_password(new)


def _admin_change(client: Client, user: User, **flags: bool) -> object:
    form = {
        "email": user.email,
        "name": user.name,
        "is_active": "on" if flags.get("is_active", user.is_active) else "",
        "is_staff": "on" if flags.get("is_staff", user.is_staff) else "",
        "is_superuser": "on" if flags.get("is_superuser", user.is_superuser) else "",
        "last_login_0": "",
        "last_login_1": "",
        "date_joined_0": "2026-01-01",
        "date_joined_1": "00:00:00",
    }
    response = client.post(f"/admin/projects/user/{user.pk}/change/", form)
    assert response.status_code == 302, response.content[:2000]  # type: ignore[attr-defined]
    return response


@pytest.fixture
def django_admin(db) -> tuple[User, Client]:
    root = User.objects.create_superuser("root@example.com", PASSWORD)
    client = browser()
    client.force_login(root)
    return root, client


def test_granting_staff_in_django_admin_is_one_privilege_event(world, django_admin) -> None:
    root, client = django_admin
    event = exactly_one("user.privileges_changed", lambda: _admin_change(client, world.member, is_staff=True))
    assert (event.actor_email, event.target, event.via) == (root.email, world.member.email, "admin")
    assert event.detail == {"is_staff": {"from": False, "to": True}}
    assert (event.ip, event.user_agent) == ("203.0.113.9", "audit-browser/2.0")


def test_granting_and_revoking_superuser_in_django_admin_are_recorded(world, django_admin) -> None:
    _, client = django_admin
    granted = exactly_one(
        "user.privileges_changed", lambda: _admin_change(client, world.member, is_staff=True, is_superuser=True)
    )
    assert granted.detail == {"is_staff": {"from": False, "to": True}, "is_superuser": {"from": False, "to": True}}
    member = User.objects.get(pk=world.member.pk)
    revoked = exactly_one("user.privileges_changed", lambda: _admin_change(client, member, is_superuser=False))
    assert revoked.detail == {"is_superuser": {"from": True, "to": False}}


def test_saving_a_user_in_django_admin_without_a_privilege_change_records_none(world, django_admin) -> None:
    _, client = django_admin
    from tests.governance.test_audit_trail import AuditEvent

    before = AuditEvent.objects.filter(kind="user.privileges_changed").count()
    _admin_change(client, world.member)
    assert AuditEvent.objects.filter(kind="user.privileges_changed").count() == before


def test_reactivating_in_django_admin_is_recorded(world, django_admin) -> None:
    root, client = django_admin
    User.objects.filter(pk=world.member.pk).update(is_active=False)
    member = User.objects.get(pk=world.member.pk)
    event = exactly_one("user.reactivated", lambda: _admin_change(client, member, is_active=True))
    assert (event.actor_email, event.target, event.via) == (root.email, world.member.email, "admin")


def test_granting_django_permissions_in_admin_is_a_privilege_event(world, django_admin) -> None:
    _, client = django_admin
    permission = Permission.objects.get(codename="delete_user")

    def grant() -> None:
        form = {
            "email": world.member.email,
            "name": "",
            "is_active": "on",
            "user_permissions": [str(permission.pk)],
            "last_login_0": "",
            "last_login_1": "",
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
        }
        assert client.post(f"/admin/projects/user/{world.member.pk}/change/", form).status_code == 302

    event = exactly_one("user.privileges_changed", grant)
    assert event.detail == {"permissions": {"added": ["projects.delete_user"], "removed": []}}


@pytest.fixture
def provider(db, settings, oidc_provider):  # noqa: F811 (fixture)
    settings.SESSIONLEDGER_SSO_JIT = True
    return configure(settings, oidc_provider, "http://testserver")


def test_a_single_sign_on_login_names_its_provider(db, provider) -> None:
    person = UserFactory(email="dev@acme.test")
    event = exactly_one("auth.login", lambda: sso_sign_in(provider, "sso-member", person.email, browser()))
    assert (event.actor_email, event.target, event.detail) == (
        person.email,
        person.email,
        {"method": f"sso:{PROVIDER_ID}"},
    )


def test_an_account_created_on_first_sso_login_is_one_jit_event(db, provider) -> None:
    made = exactly_one("user.jit_created", lambda: sso_sign_in(provider, "sso-new", "newcomer@acme.test", browser()))
    assert (made.actor_email, made.target, made.detail) == (
        "newcomer@acme.test",
        "newcomer@acme.test",
        {"provider": PROVIDER_ID},
    )
    again = exactly_one("auth.login", lambda: sso_sign_in(provider, "sso-new", "newcomer@acme.test", browser()))
    assert again.detail == {"method": f"sso:{PROVIDER_ID}"}


def test_a_device_login_collected_by_the_cli_is_a_device_login(world) -> None:
    started = device.device_start(client_name="laptop")
    grant = device.device_grant_for_user_code(started.user_code)
    assert grant is not None
    device.device_decide(grant=grant, user=world.member, approve=True)
    cli = APIClient()
    event = exactly_one(
        "auth.login",
        lambda: cli.post("/api/v1/auth/device/token", {"device_code": started.device_code}, format="json"),
    )
    assert (event.actor_email, event.target, event.detail) == (
        world.member.email,
        world.member.email,
        {"method": "device"},
    )

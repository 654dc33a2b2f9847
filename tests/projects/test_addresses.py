"""Address pre-registration: squatting someone's e-mail address never gets the squatter into a project.

The attack: with open sign-up and no verification, someone signs up as
``victim@corp.test``; an admin later adds that address, and the attacker is in. Joining needs a
verified address; in production verification is mandatory by default; neither sign-up nor adding a
member tells anyone whether an address has an account (docs/security.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core import mail
from django.core.management import CommandError, call_command

from projects.models import Membership, Role, User
from projects.scoping import unscoped
from tests.factories import UserFactory

BASE_DIR = Path(__file__).resolve().parents[2]
VICTIM = "victim@corp.test"


def _production_setting(name: str, **environ: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "ACCOUNT_EMAIL_VERIFICATION"}}
    env.update(SESSIONLEDGER_ENV="production", SECRET_KEY="x" * 50, DJANGO_SETTINGS_MODULE="config.settings")
    env.update(environ)
    code = f"import django; django.setup(); from django.conf import settings; print(settings.{name})"
    return subprocess.run([sys.executable, "-c", code], cwd=BASE_DIR, env=env, capture_output=True, text=True)


@pytest.fixture
def production_verification(settings) -> str:
    """This process's allauth configured as production configures it by default."""
    result = _production_setting("ACCOUNT_EMAIL_VERIFICATION")
    assert result.returncode == 0, result.stderr
    settings.ACCOUNT_EMAIL_VERIFICATION = result.stdout.strip()
    return settings.ACCOUNT_EMAIL_VERIFICATION


def _membership(project, email: str) -> Membership | None:
    with unscoped():
        return Membership.objects.filter(project=project, user__email=email).first()


def _sign_up(client, email: str, password: str = "squatter-pass-1234"):
    return client.post("/accounts/signup/", {"email": email, "password1": password, "password2": password})


def _invite_by_member_add(world, api_as, email: str, role: str = "admin"):
    return api_as(world.admin).post(
        f"/api/v1/projects/{world.project.slug}/members", {"email": email, "role": role}, format="json"
    )


# --- the attack end to end -------------------------------------------------------------------------


def test_a_squatter_who_signed_up_with_the_victims_address_never_joins(world, api_as, client) -> None:
    assert _sign_up(client, VICTIM).status_code == 302  # the development default lets them in, unverified
    squatter = User.objects.get(email=VICTIM)

    added = _invite_by_member_add(world, api_as, VICTIM)
    assert _membership(world.project, VICTIM) is None, "adding an unverified address must not make a member"

    invitation = added.json()["url"].removeprefix("http://testserver")
    client.force_login(squatter)
    refused = client.post(invitation, follow=True)
    assert "Verify victim@corp.test first" in refused.content.decode()
    assert _membership(world.project, VICTIM) is None
    assert api_as(squatter).get(f"/api/v1/projects/{world.project.slug}").status_code == 404


def test_an_invitation_is_not_accepted_with_an_unverified_address(world, api_as, client) -> None:
    invitation = _invite_by_member_add(world, api_as, "dana@example.com", role="viewer").json()
    client.force_login(UserFactory(email="dana@example.com", email_verified=False))
    response = client.post(invitation["url"].removeprefix("http://testserver"))
    assert response.status_code == 200 and "Verify dana@example.com first" in response.content.decode()
    assert _membership(world.project, "dana@example.com") is None


def test_the_operator_cannot_add_a_squatted_unverified_address(world) -> None:
    UserFactory(email=VICTIM, email_verified=False)
    with pytest.raises(CommandError, match="has not been verified by its owner"):
        call_command("add_member", world.project.slug, VICTIM, role=Role.ADMIN)
    assert _membership(world.project, VICTIM) is None


def test_an_account_the_operator_creates_counts_as_verified(world) -> None:
    call_command("create_user", "ops@corp.test")
    call_command("add_member", world.project.slug, "ops@corp.test", role=Role.VIEWER)
    assert _membership(world.project, "ops@corp.test").role == Role.VIEWER


# --- nothing tells whether an address has an account ------------------------------------------------


def _comparable(response) -> tuple[int, dict]:
    body = dict(response.json())
    for varying in ("id", "email", "url", "created_at", "expires_at"):
        body.pop(varying, None)
    return response.status_code, body


def test_member_add_does_not_reveal_whether_an_account_exists(world, api_as) -> None:
    UserFactory(email="verified@corp.test")
    UserFactory(email="unverified@corp.test", email_verified=False)
    answers = [
        _invite_by_member_add(world, api_as, email, role="viewer")
        for email in ("verified@corp.test", "unverified@corp.test", "nobody@corp.test")
    ]
    assert [a.status_code for a in answers] == [202, 202, 202], [a.content for a in answers]
    assert _comparable(answers[0]) == _comparable(answers[1]) == _comparable(answers[2])
    assert all(_membership(world.project, a.json()["email"]) is None for a in answers)


def test_signup_in_production_does_not_reveal_whether_an_account_exists(
    db, client, production_verification, settings
) -> None:
    assert production_verification == "mandatory"
    victim, newcomer = VICTIM, "new.person@corp.test"
    UserFactory(email=victim, password="the-victims-own-pass-1")
    taken = _sign_up(client, victim)
    client.logout()
    fresh = _sign_up(client, newcomer)

    assert (taken.status_code, taken.get("Location")) == (fresh.status_code, fresh.get("Location"))
    assert taken.status_code == 302
    assert User.objects.filter(email=victim).count() == 1
    assert User.objects.get(email=victim).check_password("the-victims-own-pass-1")
    assert sorted(m.to[0] for m in mail.outbox) == sorted([newcomer, victim])  # each is told by e-mail


def test_production_lets_nobody_sign_in_before_verifying(db, client, production_verification) -> None:
    _sign_up(client, "new.person@corp.test")
    assert client.get("/").status_code == 302  # not signed in: verification is pending


# --- configuration -----------------------------------------------------------------------------------


def test_production_verification_is_configurable() -> None:
    result = _production_setting("ACCOUNT_EMAIL_VERIFICATION", ACCOUNT_EMAIL_VERIFICATION="optional")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "optional"


def test_a_misspelt_verification_mode_stops_start_up() -> None:
    result = _production_setting("ACCOUNT_EMAIL_VERIFICATION", ACCOUNT_EMAIL_VERIFICATION="mandatroy")
    assert result.returncode != 0
    assert "ACCOUNT_EMAIL_VERIFICATION='mandatroy' is not valid: expected one of none, optional, mandatory" in (
        result.stderr
    )

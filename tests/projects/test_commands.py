"""The operator commands of docs/design.md §8: each prints what it did and fails with a clear message."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from projects.models import ApiToken, Membership, Project, Role, User
from projects.scoping import unscoped


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _role(slug: str, email: str) -> str | None:
    with unscoped():
        membership = Membership.objects.filter(project__slug=slug, user__email=email).first()
    return membership.role if membership else None


# --- create_user ---------------------------------------------------------------------------------


def test_create_user_makes_an_account_that_can_log_in(db, client) -> None:
    out, _ = run("create_user", "Dana@Example.com", "--password", "a-long-password-1")
    user = User.objects.get(email="dana@example.com")
    assert out == f"created user dana@example.com (id {user.pk})\n"
    assert not user.is_staff
    assert client.login(email="dana@example.com", password="a-long-password-1")


def test_create_user_without_a_password_cannot_log_in_with_one(db) -> None:
    run("create_user", "dana@example.com")
    assert not User.objects.get(email="dana@example.com").has_usable_password()


def test_create_user_staff_is_site_staff(db) -> None:
    out, _ = run("create_user", "ops@example.com", "--staff")
    assert out.rstrip().endswith(", staff)")
    user = User.objects.get(email="ops@example.com")
    assert user.is_staff and user.is_superuser


def test_create_user_refuses_an_existing_email(world) -> None:
    with pytest.raises(CommandError, match=re.escape("A user with e-mail ALICE@example.com already exists")):
        run("create_user", "ALICE@example.com")


# --- create_project ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "remote",
    [
        "git@github.com:acme/api.git",
        "https://github.com/acme/api.git",
        "https://github.com/acme/api",
        "ssh://git@github.com/acme/api.git",
        "https://GitHub.com/acme/api/",
        "github.com/acme/api",
    ],
)
def test_create_project_normalises_the_repo_remote(db, remote: str) -> None:
    out, _ = run("create_project", "api", "--repo", remote)
    project = Project.objects.get(slug="api")
    assert project.repo == "github.com/acme/api"
    assert out == f"created project api (id {project.pk}, repo github.com/acme/api)\n"


def test_create_project_with_a_name_and_an_admin(world) -> None:
    out, _ = run("create_project", "acme-web", "--name", "Acme Web", "--admin", world.outsider.email)
    assert Project.objects.get(slug="acme-web").name == "Acme Web"
    assert _role("acme-web", world.outsider.email) == Role.ADMIN
    assert out.rstrip().endswith(f"admin {world.outsider.email}")


def test_create_project_without_a_repo_says_so(db) -> None:
    out, _ = run("create_project", "scratch")
    assert "repo -" in out and Project.objects.get(slug="scratch").repo is None


def test_create_project_refuses_a_duplicate_slug(world) -> None:
    with pytest.raises(CommandError, match="A project with slug 'acme-api' already exists"):
        run("create_project", world.project.slug)


def test_create_project_refuses_a_repo_another_project_has(world) -> None:
    with pytest.raises(
        CommandError, match=re.escape(f"Project 'acme-api' already has the repository {world.project.repo}")
    ):
        run("create_project", "copy", "--repo", f"git@{world.project.repo.replace('/', ':', 1)}.git")
    assert not Project.objects.filter(slug="copy").exists()


@pytest.mark.parametrize("slug", ["Has Space", "a/b", "ü-nicode", "x" * 65])
def test_create_project_refuses_a_slug_no_url_could_address(db, slug: str) -> None:
    with pytest.raises(CommandError, match="is not a valid slug"):
        run("create_project", slug)
    assert not Project.objects.exists()


def test_create_project_refuses_an_unknown_admin(db) -> None:
    with pytest.raises(CommandError, match=re.escape("No user with e-mail ghost@example.com")):
        run("create_project", "api", "--admin", "ghost@example.com")
    assert not Project.objects.exists()


# --- add_member ----------------------------------------------------------------------------------


def test_add_member_gives_the_user_the_role(world) -> None:
    out, _ = run("add_member", world.project.slug, world.outsider.email, "--role", "viewer")
    assert out == f"added {world.outsider.email} to {world.project.slug} as viewer\n"
    assert _role(world.project.slug, world.outsider.email) == Role.VIEWER


def test_add_member_refuses_an_existing_member(world) -> None:
    with pytest.raises(CommandError, match="already a member"):
        run("add_member", world.project.slug, world.member.email, "--role", "admin")
    assert _role(world.project.slug, world.member.email) == Role.MEMBER


def test_add_member_refuses_an_unknown_user(world) -> None:
    with pytest.raises(CommandError, match=re.escape("No user with e-mail ghost@example.com; create it with")):
        run("add_member", world.project.slug, "ghost@example.com", "--role", "member")


def test_add_member_refuses_an_unknown_project(world) -> None:
    with pytest.raises(CommandError, match="No project 'nope'"):
        run("add_member", "nope", world.outsider.email, "--role", "member")


def test_add_member_refuses_an_unknown_role(world) -> None:
    with pytest.raises(CommandError, match="invalid choice: 'owner'"):
        run("add_member", world.project.slug, world.outsider.email, "--role", "owner")


# --- create_token --------------------------------------------------------------------------------


def test_create_token_prints_exactly_the_secret_which_authenticates(world) -> None:
    out, err = run("create_token", world.member.email, "--name", "ci")
    assert re.fullmatch(r"slp_[A-Za-z0-9_-]+\n", out)
    secret = out.strip()
    assert "created token ci" in err and secret not in err

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    response = client.get("/api/v1/projects")
    assert response.status_code == 200 and [p["slug"] for p in response.json()] == [world.project.slug]


def test_create_token_with_a_project_scopes_and_expiry(world) -> None:
    out, _ = run(
        "create_token",
        world.member.email,
        "--name",
        "ci",
        "--project",
        world.project.slug,
        "--scopes",
        "read",
        "--expires-days",
        "7",
    )
    token = ApiToken.objects.get(user=world.member)
    assert token.project == world.project and token.scopes == ["read"] and token.expires_at is not None
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {out.strip()}")
    members_post = client.post(f"/api/v1/projects/{world.project.slug}/invitations", {"email": "x@example.com"})
    assert members_post.status_code == 403


def test_create_token_refuses_an_unknown_user(db) -> None:
    with pytest.raises(CommandError, match=re.escape("No user with e-mail ghost@example.com")):
        run("create_token", "ghost@example.com", "--name", "ci")


def test_create_token_refuses_an_unknown_project(world) -> None:
    with pytest.raises(CommandError, match="No project 'nope'"):
        run("create_token", world.member.email, "--name", "ci", "--project", "nope")
    assert not ApiToken.objects.exists()


def test_create_token_refuses_a_bad_scope(world) -> None:
    with pytest.raises(CommandError, match="Scopes must be read and/or write"):
        run("create_token", world.member.email, "--name", "ci", "--scopes", "read,admin")
    assert not ApiToken.objects.exists()


def test_create_token_needs_a_name(world) -> None:
    with pytest.raises(CommandError, match="--name"):
        run("create_token", world.member.email)

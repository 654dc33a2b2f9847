"""API tokens: how a developer machine authenticates, and how a user manages its tokens."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from projects import services
from projects.models import ApiToken, Membership, Role
from projects.scoping import unscoped
from projects.tokens import hash_secret


def _bearer(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def _slugs(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [project["slug"] for project in response.json()]


def _assert_refused_with_401(response, message_part: str) -> None:
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    error = response.json()["error"]
    assert set(error) >= {"code", "message", "field"}
    assert error["code"] == "authentication_failed"
    assert message_part in error["message"]


# --- storage and authentication ------------------------------------------------------------------


def test_only_the_sha256_of_the_secret_is_stored(world) -> None:
    token, secret = services.token_create(user=world.member, name="laptop")
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM projects_apitoken WHERE id = %s", [token.pk])
        row = cursor.fetchone()
    assert hash_secret(secret) in row
    assert not any(secret in str(value) for value in row)
    assert token.prefix == secret[: len(token.prefix)] and len(token.prefix) < len(secret) // 2


def test_a_secret_starts_with_slp_and_works_as_a_bearer_token(world) -> None:
    _, secret = services.token_create(user=world.member, name="laptop")
    assert secret.startswith("slp_")
    assert _slugs(_bearer(secret).get("/api/v1/projects")) == [world.project.slug]


@pytest.mark.parametrize("secret", ["slp_not-a-real-token", "garbage"])
def test_a_wrong_token_gets_401_with_the_json_error_shape(world, secret: str) -> None:
    _assert_refused_with_401(_bearer(secret).get("/api/v1/projects"), "Invalid token")


def test_an_empty_bearer_header_gets_401(world) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer ")
    _assert_refused_with_401(client.get("/api/v1/projects"), "no token")


def test_no_token_at_all_gets_401(world) -> None:
    response = APIClient().get(f"/api/v1/projects/{world.project.slug}")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert response.json()["error"]["code"] == "not_authenticated"


def test_a_revoked_token_gets_401(world) -> None:
    token, secret = services.token_create(user=world.member, name="laptop")
    services.token_revoke(token=token)
    _assert_refused_with_401(_bearer(secret).get("/api/v1/projects"), "revoked")


def test_an_expired_token_gets_401(world) -> None:
    token, secret = services.token_create(user=world.member, name="laptop", expires_days=1)
    assert _bearer(secret).get("/api/v1/projects").status_code == 200
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    _assert_refused_with_401(_bearer(secret).get("/api/v1/projects"), "expired")


def test_a_token_of_a_disabled_account_gets_401(world) -> None:
    _, secret = services.token_create(user=world.member, name="laptop")
    world.member.is_active = False
    world.member.save()
    _assert_refused_with_401(_bearer(secret).get("/api/v1/projects"), "disabled")


def test_last_used_at_is_set_when_a_token_is_used(world) -> None:
    token, secret = services.token_create(user=world.member, name="laptop")
    assert token.last_used_at is None
    before = timezone.now()
    _bearer(secret).get("/api/v1/projects")
    token.refresh_from_db()
    assert token.last_used_at is not None and token.last_used_at >= before


# --- scopes and project restriction --------------------------------------------------------------


def test_a_read_only_token_can_read_but_not_post(world, api_as) -> None:
    client = api_as(world.admin, scopes=["read"])
    members = f"/api/v1/projects/{world.project.slug}/members"
    assert client.get(members).status_code == 200
    response = client.post(members, {"email": world.outsider.email, "role": "member"}, format="json")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "permission_denied"
    assert "scope" in response.json()["error"]["message"]
    with unscoped():
        assert not Membership.objects.filter(user=world.outsider).exists()


def test_a_read_only_token_cannot_mint_a_writing_token(world, api_as) -> None:
    response = api_as(world.member, scopes=["read"]).post("/api/v1/tokens", {"name": "escalate"}, format="json")
    assert response.status_code == 403
    assert ApiToken.objects.filter(user=world.member).count() == 1


def test_a_read_only_token_cannot_revoke_tokens(world, api_as) -> None:
    token, _ = services.token_create(user=world.member, name="laptop")
    response = api_as(world.member, scopes=["read"]).delete(f"/api/v1/tokens/{token.pk}")
    assert response.status_code == 403
    token.refresh_from_db()
    assert token.revoked_at is None


@pytest.fixture
def member_of_both(world):
    """The member of project A is also a member of project B."""
    with unscoped():
        Membership.objects.create(project=world.other_project, user=world.member, role=Role.MEMBER)
    return world


def test_a_token_restricted_to_one_project_gets_404_on_another_where_the_user_is_a_member(member_of_both, api_as):
    world = member_of_both
    unrestricted = api_as(world.member)
    assert unrestricted.get(f"/api/v1/projects/{world.other_project.slug}").status_code == 200

    restricted = api_as(world.member, project=world.project)
    assert restricted.get(f"/api/v1/projects/{world.project.slug}").status_code == 200
    response = restricted.get(f"/api/v1/projects/{world.other_project.slug}")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert _slugs(restricted.get("/api/v1/projects")) == [world.project.slug]


def test_a_restricted_token_mints_only_tokens_restricted_to_the_same_project(member_of_both, api_as) -> None:
    world = member_of_both
    restricted = api_as(world.member, project=world.project)

    response = restricted.post("/api/v1/tokens", {"name": "child"}, format="json")
    assert response.status_code == 201
    assert response.json()["project"] == world.project.slug
    assert _slugs(_bearer(response.json()["secret"]).get("/api/v1/projects")) == [world.project.slug]

    escape = restricted.post("/api/v1/tokens", {"name": "escape", "project": world.other_project.slug}, format="json")
    assert escape.status_code == 404


# --- the token API --------------------------------------------------------------------------------


def test_creating_a_token_returns_its_secret_once_and_the_list_never_does(world, api_as) -> None:
    client = api_as(world.member)
    response = client.post("/api/v1/tokens", {"name": "ci", "scopes": ["read"], "expires_days": 30}, format="json")
    assert response.status_code == 201
    created = response.json()
    assert created["secret"].startswith("slp_") and created["name"] == "ci" and created["scopes"] == ["read"]
    assert created["expires_at"] is not None

    listing = client.get("/api/v1/tokens")
    assert listing.status_code == 200
    assert {t["name"] for t in listing.json()} == {"test", "ci"}
    assert all("secret" not in t for t in listing.json())
    assert created["secret"] not in listing.content.decode()
    assert created["prefix"] in listing.content.decode()

    assert _slugs(_bearer(created["secret"]).get("/api/v1/projects")) == [world.project.slug]


def test_a_token_for_a_project_i_am_not_in_cannot_be_created(world, api_as) -> None:
    response = api_as(world.member).post(
        "/api/v1/tokens", {"name": "x", "project": world.other_project.slug}, format="json"
    )
    assert response.status_code == 404
    assert response.json()["error"]["field"] == "project"


def test_an_unknown_scope_is_refused_naming_the_field(world, api_as) -> None:
    response = api_as(world.member).post("/api/v1/tokens", {"name": "x", "scopes": ["admin"]}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["field"].startswith("scopes")


def test_a_revoked_token_stops_working_and_is_listed_as_revoked(world, api_as) -> None:
    client = api_as(world.member)
    created = client.post("/api/v1/tokens", {"name": "old laptop"}, format="json").json()

    assert client.delete(f"/api/v1/tokens/{created['id']}").status_code == 204

    _assert_refused_with_401(_bearer(created["secret"]).get("/api/v1/projects"), "revoked")
    listed = {t["id"]: t for t in client.get("/api/v1/tokens").json()}
    assert listed[created["id"]]["revoked_at"] is not None


def test_another_users_token_id_is_404_and_stays_valid(world, api_as) -> None:
    token, secret = services.token_create(user=world.other_admin, name="bobs laptop")
    client = api_as(world.member)
    response = client.delete(f"/api/v1/tokens/{token.pk}")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert all(t["id"] != token.pk for t in client.get("/api/v1/tokens").json())
    assert _bearer(secret).get("/api/v1/projects").status_code == 200


def test_the_token_api_needs_authentication(db) -> None:
    assert APIClient().get("/api/v1/tokens").status_code == 401
    assert APIClient().post("/api/v1/tokens", {"name": "x"}, format="json").status_code == 401


# --- a minted token stays within the token that minted it ---------------------------------------


def _mint(client: APIClient, **body: object):
    response = client.post("/api/v1/tokens", {"name": "child", **body}, format="json")
    assert response.status_code in (201, 403, 429), response.content
    return response


def test_minted_token_never_outlives_its_parent(world, api_as) -> None:
    parent = api_as(world.member, expires_days=1)
    parent_expiry = ApiToken.objects.get(user=world.member).expires_at

    inherited = _mint(parent)
    assert inherited.status_code == 201, inherited.content
    assert ApiToken.objects.get(pk=inherited.json()["id"]).expires_at == parent_expiry

    longer = _mint(parent, expires_days=365)
    assert longer.status_code == 201
    assert ApiToken.objects.get(pk=longer.json()["id"]).expires_at == parent_expiry

    shorter = _mint(api_as(world.member, expires_days=30), expires_days=1)
    assert ApiToken.objects.get(pk=shorter.json()["id"]).expires_at < timezone.now() + timedelta(days=1, minutes=1)
    assert ApiToken.objects.filter(user=world.member, expires_at__isnull=True).count() == 0


def test_minted_token_never_outranks_its_parents_scopes(world, api_as) -> None:
    write_only = api_as(world.member, scopes=["write"])

    wider = _mint(write_only, scopes=["read", "write"])
    assert wider.status_code == 403
    assert wider.json()["error"]["code"] == "exceeds_parent" and wider.json()["error"]["field"] == "scopes"

    default = _mint(write_only)
    assert default.status_code == 201 and default.json()["scopes"] == ["write"]
    assert ApiToken.objects.filter(user=world.member).count() == 2


def test_a_browser_session_mints_tokens_bounded_only_by_the_users_rights(world, client) -> None:
    client.force_login(world.member)
    response = client.post("/api/v1/tokens", {"name": "from the browser"}, content_type="application/json")
    assert response.status_code == 201
    assert response.json()["scopes"] == ["read", "write"] and response.json()["expires_at"] is None


def test_a_project_restricted_token_lists_and_revokes_only_its_projects_tokens(member_of_both, api_as) -> None:
    world = member_of_both
    unrestricted, _ = services.token_create(user=world.member, name="laptop")
    other, _ = services.token_create(user=world.member, name="globex ci", project=world.other_project)
    sibling, _ = services.token_create(user=world.member, name="acme ci", project=world.project)
    restricted = api_as(world.member, project=world.project)

    listed = {t["name"] for t in restricted.get("/api/v1/tokens").json()}
    assert listed == {"test", "acme ci"}

    for victim in (unrestricted, other):
        response = restricted.delete(f"/api/v1/tokens/{victim.pk}")
        assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
        victim.refresh_from_db()
        assert victim.revoked_at is None

    assert restricted.delete(f"/api/v1/tokens/{sibling.pk}").status_code == 204
    assert {t["name"] for t in api_as(world.member).get("/api/v1/tokens").json()} >= {"laptop", "globex ci"}


def test_a_throttled_token_cannot_mint_fresh_tokens_to_dodge_its_limit(world, api_as, settings) -> None:
    """Minting is budgeted per user, not per token: rotating to a fresh token does not reset the count."""
    settings.SESSIONLEDGER_TOKEN_MINT_RATE = "3/hour"
    first = api_as(world.member)
    minted = [_mint(first) for _ in range(3)]
    assert [r.status_code for r in minted] == [201, 201, 201]

    fresh = _bearer(minted[-1].json()["secret"])
    refused = [_mint(first), _mint(fresh)]
    assert [r.status_code for r in refused] == [429, 429]
    assert refused[1].json()["error"]["code"] == "throttled"
    assert int(refused[1]["Retry-After"]) > 0
    assert ApiToken.objects.filter(user=world.member).count() == 4
    assert _mint(api_as(world.admin)).status_code == 201  # another user has their own budget


# --- revoking a token revokes what was minted with it ---------------------------------------------


def test_revoking_a_leaked_token_revokes_the_tokens_minted_with_it_and_theirs(world, api_as) -> None:
    leaked = api_as(world.member)
    child = _mint(leaked).json()
    grandchild = _mint(_bearer(child["secret"])).json()
    unrelated = _mint(api_as(world.member)).json()  # minted with another token of the same user
    leaked_id = ApiToken.objects.get(pk=child["id"]).parent_id
    assert ApiToken.objects.get(pk=grandchild["id"]).parent_id == child["id"]

    assert api_as(world.admin).delete(f"/api/v1/tokens/{leaked_id}").status_code == 404  # not theirs
    assert leaked.delete(f"/api/v1/tokens/{leaked_id}").status_code == 204

    for secret in (child["secret"], grandchild["secret"]):
        _assert_refused_with_401(_bearer(secret).get("/api/v1/projects"), "revoked")
    assert _bearer(unrelated["secret"]).get("/api/v1/projects").status_code == 200


def test_revoking_a_child_leaves_its_parent_working(world, api_as) -> None:
    parent = api_as(world.member)
    child = _mint(parent).json()
    assert parent.delete(f"/api/v1/tokens/{child['id']}").status_code == 204
    assert parent.get("/api/v1/projects").status_code == 200
    _assert_refused_with_401(_bearer(child["secret"]).get("/api/v1/projects"), "revoked")

"""Projects by API: staff create them, their admins rename, archive and delete them; members are
refused and outsiders see nothing."""

from __future__ import annotations

from django_scopes import scopes_disabled

from projects.models import Membership, Project, Role
from tests.conftest import conversation
from tests.factories import UserFactory
from tests.uploads import commit_hash, metadata_for, upload


def test_staff_create_a_project_with_its_first_admin(world, api_as) -> None:
    staff = UserFactory(email="ops@example.com", is_staff=True)
    response = api_as(staff).post(
        "/api/v1/projects",
        {"slug": "billing", "name": "Billing", "repo": "git@github.com:acme/billing.git", "admin": world.member.email},
        format="json",
    )
    assert response.status_code == 201, response.content
    assert (response.json()["slug"], response.json()["repo"]) == ("billing", "github.com/acme/billing")
    with scopes_disabled():
        [membership] = Membership.objects.filter(project__slug="billing")
    assert (membership.user, membership.role) == (world.member, Role.ADMIN)
    assert api_as(world.member).get("/api/v1/projects/billing").status_code == 200


def test_the_creating_staff_member_is_the_admin_when_none_is_named(world, api_as) -> None:
    staff = UserFactory(email="ops@example.com", is_staff=True)
    assert api_as(staff).post("/api/v1/projects", {"slug": "mine"}, format="json").status_code == 201
    assert api_as(staff).get("/api/v1/projects/mine").json()["name"] == "mine"


def test_only_staff_create_projects(world, api_as) -> None:
    for user in (world.admin, world.outsider):
        assert api_as(user).post("/api/v1/projects", {"slug": "sneaky"}, format="json").status_code == 403
    staff = UserFactory(email="ops@example.com", is_staff=True)
    restricted = api_as(staff, project=world.project)
    assert restricted.post("/api/v1/projects", {"slug": "sneaky"}, format="json").status_code == 403
    read_only = api_as(staff, scopes=["read"])
    assert read_only.post("/api/v1/projects", {"slug": "sneaky"}, format="json").status_code == 403
    assert not Project.objects.filter(slug="sneaky").exists()


def test_a_taken_slug_is_a_conflict(world, api_as) -> None:
    staff = UserFactory(email="ops@example.com", is_staff=True)
    response = api_as(staff).post("/api/v1/projects", {"slug": world.project.slug}, format="json")
    assert response.status_code == 409


def test_admins_rename_members_cannot_outsiders_see_nothing(world, api_as) -> None:
    url = f"/api/v1/projects/{world.project.slug}"
    assert api_as(world.outsider).patch(url, {"name": "Mine"}, format="json").status_code == 404
    assert api_as(world.other_admin).patch(url, {"name": "Mine"}, format="json").status_code == 404
    assert api_as(world.member).patch(url, {"name": "Mine"}, format="json").status_code == 403
    response = api_as(world.admin).patch(url, {"name": "Acme API v2"}, format="json")
    assert response.status_code == 200 and response.json()["name"] == "Acme API v2"


def test_an_archived_project_refuses_uploads_until_unarchived(world, api_as) -> None:
    url = f"/api/v1/projects/{world.project.slug}"
    assert api_as(world.member).patch(url, {"archived": True}, format="json").status_code == 403
    response = api_as(world.admin).patch(url, {"archived": True}, format="json")
    assert response.status_code == 200 and response.json()["archived_at"] is not None
    raw = conversation("after the archive")
    refused = upload(api_as(world.member), world.project.slug, raw, metadata_for(raw, commit_hash=commit_hash("a")))
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "archived"
    assert api_as(world.viewer).get(f"{url}/sessions").status_code == 200  # still readable
    assert api_as(world.admin).patch(url, {"archived": False}, format="json").json()["archived_at"] is None
    accepted = upload(api_as(world.member), world.project.slug, raw, metadata_for(raw, commit_hash=commit_hash("a")))
    assert accepted.status_code == 202


def test_deleting_needs_the_admin_role_and_outsiders_get_404(world, api_as) -> None:
    url = f"/api/v1/projects/{world.project.slug}"
    assert api_as(world.outsider).delete(url).status_code == 404
    assert api_as(world.other_admin).delete(url).status_code == 404
    assert api_as(world.viewer).delete(url).status_code == 403
    assert api_as(world.admin, scopes=["read"]).delete(url).status_code == 403
    assert api_as(world.admin).delete(url).status_code == 204
    assert api_as(world.admin).get(url).status_code == 404
    assert Project.objects.filter(pk=world.other_project.pk).exists()

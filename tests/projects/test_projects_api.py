"""``GET /api/v1/projects`` and ``/api/v1/projects/{slug}``: only my projects exist for me."""

from __future__ import annotations

import pytest


def _slugs(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [project["slug"] for project in response.json()]


@pytest.mark.parametrize(("role", "expected"), [("admin", ["acme-api"]), ("viewer", ["acme-api"]), ("outsider", [])])
def test_the_project_list_shows_only_my_projects(world, api_as, role: str, expected: list[str]) -> None:
    assert _slugs(api_as(world.user(role)).get("/api/v1/projects")) == expected


def test_the_other_projects_admin_sees_only_theirs(world, api_as) -> None:
    assert _slugs(api_as(world.other_admin).get("/api/v1/projects")) == ["globex-web"]


def test_a_project_in_the_list_carries_its_fields_and_page_link(world, api_as) -> None:
    [project] = api_as(world.member).get("/api/v1/projects").json()
    assert project == {
        "id": str(world.project.pk),
        "slug": "acme-api",
        "name": world.project.name,
        "repo": "github.com/acme/acme-api",
        "retention_days": None,
        "created_at": project["created_at"],
        "archived_at": None,
        "web_url": "http://testserver/p/acme-api/",
    }
    assert project["created_at"].endswith("Z") or "+" in project["created_at"]


@pytest.mark.parametrize(
    "remote",
    [
        "github.com/acme/acme-api",
        "git@github.com:acme/acme-api.git",
        "https://github.com/acme/acme-api.git",
        "https://github.com/acme/acme-api",
        "ssh://git@github.com/acme/acme-api.git",
        "https://user@GitHub.com/acme/acme-api/",
    ],
)
def test_repo_resolves_a_remote_in_any_form(world, api_as, remote: str) -> None:
    response = api_as(world.member).get("/api/v1/projects", {"repo": remote})
    assert _slugs(response) == ["acme-api"]


def test_repo_of_a_project_i_am_not_in_resolves_to_nothing(world, api_as) -> None:
    response = api_as(world.member).get("/api/v1/projects", {"repo": "git@github.com:acme/globex-web.git"})
    assert _slugs(response) == []


def test_an_unknown_repo_resolves_to_nothing(world, api_as) -> None:
    assert _slugs(api_as(world.member).get("/api/v1/projects", {"repo": "github.com/acme/nope"})) == []


def test_project_detail_for_a_member(world, api_as) -> None:
    response = api_as(world.viewer).get(f"/api/v1/projects/{world.project.slug}")
    assert response.status_code == 200
    assert response.json()["slug"] == "acme-api" and response.json()["repo"] == "github.com/acme/acme-api"


def test_an_outsider_gets_404_exactly_like_a_missing_project(world, api_as) -> None:
    client = api_as(world.outsider)
    hidden = client.get(f"/api/v1/projects/{world.project.slug}")
    missing = client.get("/api/v1/projects/no-such-project")
    assert hidden.status_code == missing.status_code == 404
    assert (
        hidden.json()
        == missing.json()
        == {"error": {"code": "not_found", "message": "No such project.", "field": None}}
    )


def test_another_projects_admin_gets_404(world, api_as) -> None:
    assert api_as(world.other_admin).get(f"/api/v1/projects/{world.project.slug}").status_code == 404


def test_anonymous_callers_get_401(world, api_as) -> None:
    assert api_as(None).get("/api/v1/projects").status_code == 401
    assert api_as(None).get(f"/api/v1/projects/{world.project.slug}").status_code == 401

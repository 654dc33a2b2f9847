"""The cross-tenant matrix, generated from the URL configuration itself.

Every route that takes a project — API and pages, including those later issues add — is called
by {anonymous, outsider, viewer, member, admin} with each method it implements. Outsiders get
404; members get what the view's declared ``required_roles`` say. A route taking a project that
is not built on the two scoped bases fails here until it is, or is listed in PUBLIC_ROUTES.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from frontend.access import ProjectPageMixin
from projects.access import ProjectAPIView
from projects.models import role_at_least

PUBLIC_ROUTES: set[str] = set()  # none yet: no project-taking route is deliberately public
ROLES = ["anonymous", "outsider", "viewer", "member", "admin"]
PLACEHOLDERS = {
    "int": "987654",
    "uuid": str(uuid.UUID(int=12345)),
    "slug": "no-such-thing",
    "str": "no-such-thing",
    "path": "no/such/thing",
}


@dataclass(frozen=True)
class Route:
    pattern: str
    view_class: type
    kind: str  # "api" or "page"

    def url(self, slug: str, ids: dict[str, str] | None = None) -> str:
        def fill(match: re.Match) -> str:
            converter, name = match.group(1) or "str", match.group(2)
            return slug if name == "project" else (ids or {}).get(name, PLACEHOLDERS[converter])

        return "/" + re.sub(r"<(?:(\w+):)?(\w+)>", fill, self.pattern)

    @property
    def has_object_id(self) -> bool:
        return len(re.findall(r"<", self.pattern)) > 1

    def methods(self) -> list[str]:
        names = ["get", "post", "put", "patch", "delete"]
        return [m for m in names if hasattr(self.view_class, m)]

    def required(self, method: str) -> str | None:
        return self.view_class.required_roles.get(method.upper())


def _walk(patterns: list, prefix: str = "") -> list[tuple[str, object]]:
    found = []
    for entry in patterns:
        if isinstance(entry, URLResolver):
            found += _walk(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            found.append((prefix + str(entry.pattern), entry.callback))
    return found


def project_routes() -> list[Route]:
    routes = []
    for pattern, callback in _walk(get_resolver().url_patterns):
        if "<slug:project>" not in pattern or pattern in PUBLIC_ROUTES:
            continue
        view_class = getattr(callback, "cls", None) or getattr(callback, "view_class", None)
        if view_class is not None and issubclass(view_class, ProjectAPIView):
            routes.append(Route(pattern, view_class, "api"))
        elif view_class is not None and issubclass(view_class, ProjectPageMixin):
            routes.append(Route(pattern, view_class, "page"))
        else:
            routes.append(Route(pattern, type(None), "unprotected"))
    return routes


CASES = [(route, method, role) for route in project_routes() for method in route.methods() or ["get"] for role in ROLES]


def test_every_project_route_is_built_on_a_scoped_base() -> None:
    unprotected = [r.pattern for r in project_routes() if r.kind == "unprotected"]
    assert unprotected == []
    assert len(project_routes()) >= 6


def _call(route: Route, method: str, role: str, world, api_as, client, slug: str, ids: dict | None = None):
    url = route.url(slug, ids)
    user = world.user(role)
    if route.kind == "api":
        return getattr(api_as(user), method)(url, {}, format="json")
    if user is not None:
        client.force_login(user)
    return getattr(client, method)(url)


@pytest.mark.parametrize(
    ("route", "method", "role"), CASES, ids=[f"{m.upper()} {r.pattern} as {role}" for r, m, role in CASES]
)
def test_route_access(route: Route, method: str, role: str, world, api_as, client) -> None:
    response = _call(route, method, role, world, api_as, client, world.project.slug)
    status = response.status_code
    required = route.required(method)
    if role == "anonymous":
        expected_anonymous = 401 if route.kind == "api" else 302
        assert status == expected_anonymous
    elif role == "outsider":
        assert status == 404
    elif required is None or not role_at_least(role, required):
        assert status == 403
    else:
        assert status not in (401, 403) and status < 500
        if not route.has_object_id:
            assert status != 404


@pytest.mark.parametrize("route", project_routes(), ids=lambda r: r.pattern)
def test_unknown_project_looks_exactly_like_a_foreign_one(route: Route, world, api_as, client) -> None:
    foreign = _call(route, "get", "admin", world, api_as, client, world.other_project.slug)
    missing = _call(route, "get", "admin", world, api_as, client, "does-not-exist")
    assert foreign.status_code == missing.status_code == 404
    if route.kind == "api":
        assert foreign.json() == missing.json()


SECRET = "globex secret roadmap"
OBJECT_ROUTES = [route for route in project_routes() if route.has_object_id]


@pytest.fixture
def foreign_ids(world, ingest) -> dict[str, str]:
    """Real ids of the *other* project's objects, by URL parameter name."""
    from projects import services
    from projects.models import Membership
    from projects.scoping import project_scope

    session = ingest(
        world.other_project,
        world.other_admin,
        SECRET,
        kind="task",
        task_id="GX-1",
        status="complete",
        agent_session_id="globex-agent-session",
        feature_branch="globex/branch",
    )
    with project_scope(world.other_project):
        invitation = services.invitation_create(
            project=world.other_project, email="new@globex.example", role="member", invited_by=world.other_admin
        )
        member = Membership.objects.get(user=world.other_admin)
    return {
        "session_id": str(session.pk),
        "member_id": str(member.pk),
        "invitation_id": str(invitation.pk),
        "sha": session.commit_hash,
        "task_id": "GX-1",
        "agent_session_id": "globex-agent-session",
        "branch": "globex/branch",
        "index": "0",
    }


@pytest.mark.parametrize(
    ("route", "method"),
    [(r, m) for r in OBJECT_ROUTES for m in r.methods() or ["get"]],
    ids=lambda value: value.pattern if isinstance(value, Route) else value,
)
def test_another_projects_object_is_invisible_even_to_an_admin_here(
    route, method, world, api_as, client, foreign_ids
) -> None:
    response = _call(route, method, "admin", world, api_as, client, world.project.slug, foreign_ids)
    if method == "get" and response.status_code == 200:  # lookups by name (commit, task, branch) list nothing
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert SECRET.encode() not in body and foreign_ids["session_id"].encode() not in body
    else:
        assert response.status_code == 404

"""The dashboard, sign-in pages in the house style, invitations, security headers."""

from __future__ import annotations

import pytest
from django_scopes import scopes_disabled

from projects import services
from projects.models import Membership
from projects.scoping import project_scope
from tests.client.transcript_builder import TranscriptBuilder

pytestmark = pytest.mark.django_db


def test_the_dashboard_lists_my_projects_and_their_recent_sessions(client, world, make_session) -> None:
    mine = make_session(world.project, world.member, TranscriptBuilder().prompt("Acme work").build(), seed="a")
    make_session(world.other_project, world.other_admin, TranscriptBuilder().prompt("Globex work").build(), seed="g")
    client.force_login(world.member)
    html = client.get("/").content.decode()
    assert "Acme Api" in html and "1 session" in html and "Acme work" in html
    assert f"/p/acme-api/s/{mine.pk}" in html
    assert "Globex" not in html


def test_the_dashboard_explains_what_to_do_without_projects(client, world) -> None:
    client.force_login(world.outsider)
    assert "Ask a project admin for an invitation" in client.get("/").content.decode()


def test_the_project_switcher_lists_only_my_projects(client, world) -> None:
    with scopes_disabled():
        Membership.objects.create(project=world.other_project, user=world.member, role="viewer")
    client.force_login(world.member)
    html = client.get(f"/p/{world.project.slug}/").content.decode()
    menu = html[html.index('class="switcher"') : html.index("</details>", html.index('class="switcher"'))]
    assert 'href="/p/acme-api/" aria-current="page"' in menu and 'href="/p/globex-web/"' in menu
    client.force_login(world.viewer)
    html = client.get(f"/p/{world.project.slug}/").content.decode()
    assert "/p/globex-web/" not in html


def test_anonymous_visitors_are_sent_to_the_login_page(client) -> None:
    response = client.get("/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_the_login_page_uses_the_house_layout(client) -> None:
    response = client.get("/accounts/login/")
    html = response.content.decode()
    assert response.status_code == 200 and "/static/frontend/app.css" in html
    assert 'class="auth-form"' in html and 'class="btn primary"' in html and "Sign In · Sessionledger" in html


def test_an_invitation_can_be_accepted_from_its_link(client, world) -> None:
    with project_scope(world.project):
        invitation = services.invitation_create(
            project=world.project, email=world.outsider.email, role="viewer", invited_by=world.admin
        )
    client.force_login(world.outsider)
    response = client.post(f"/invitations/{invitation.token}/", follow=True)
    assert response.redirect_chain[-1][0] == "/p/acme-api/" and "You joined Acme Api as viewer." in (
        response.content.decode()
    )


def test_every_page_sends_the_security_headers(client, world) -> None:
    client.force_login(world.viewer)
    for path in ("/", f"/p/{world.project.slug}/", "/accounts/login/", "/no/such/page"):
        response = client.get(path)
        assert "script-src 'self'" in response["Content-Security-Policy"], path
        assert response["X-Content-Type-Options"] == "nosniff" and response["X-Frame-Options"] == "DENY"


def test_404_and_403_pages_are_friendly(client, world) -> None:
    client.force_login(world.viewer)
    assert "nothing you can see" in client.get("/p/nope/").content.decode()
    response = client.get(f"/p/{world.project.slug}/settings/")
    assert response.status_code == 403 and "Not allowed" in response.content.decode()

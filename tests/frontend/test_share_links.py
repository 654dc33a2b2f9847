"""Share links: a member's expiring, revocable, read-only link to one session; every view in
the access log; noindex; no way into the project from it; expired, revoked or disabled links
answer exactly like a token that never existed."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from django_scopes import scopes_disabled

from projects.models import Project
from sessions_app.models import AccessLog, ShareLink


@pytest.fixture
def shared(world, ingest):
    return ingest(world.project, world.member, "Explain the retry policy", seed="shared")


def create(api_as, user, session, days: int = 7):
    url = f"/api/v1/projects/{session.project.slug}/sessions/{session.pk}/shares"
    return api_as(user).post(url, {"days": days}, format="json")


def token_of(response) -> str:
    return response.json()["url"].rsplit("/share/", 1)[1]


def missing_page() -> bytes:
    return Client().get("/share/" + "x" * 43).content


def test_anyone_with_the_link_reads_the_session_and_nothing_else(world, api_as, shared) -> None:
    made = create(api_as, world.member, shared)
    assert made.status_code == 201 and made.json()["link"]["active"] is True
    stranger = Client(REMOTE_ADDR="198.51.100.7")

    page = stranger.get(f"/share/{token_of(made)}")

    assert page.status_code == 200
    html = page.content.decode()
    assert "Explain the retry policy" in html
    assert '<meta name="robots" content="noindex, nofollow">' in html and page["X-Robots-Tag"] == "noindex, nofollow"
    assert page["Referrer-Policy"] == "no-referrer" and "no-store" in page["Cache-Control"]
    hrefs = re.findall(r'href="([^"]*)"', html)
    internal = [h for h in hrefs if not h.startswith(("http://", "https://", "#", "?", "/static/"))]
    assert all(h.startswith(f"/share/{token_of(made)}") for h in internal), internal
    assert f"/p/{world.project.slug}" not in html and "Log in" not in html
    assert "<script" not in html and "<kbd>" not in html  # no script on a shared page, so no key hints
    with scopes_disabled():
        [entry] = AccessLog.objects.all()
    assert (entry.via, entry.user, entry.session_id, entry.ip) == ("share", None, shared.pk, "198.51.100.7")


def test_a_message_opens_in_full_under_the_share(world, api_as, shared) -> None:
    token = token_of(create(api_as, world.member, shared))
    assert Client().get(f"/share/{token}/m/0").status_code == 200
    assert Client().get(f"/share/{token}/m/999").content == missing_page()


@pytest.mark.parametrize("days", [0, 31, 365])
def test_a_link_lives_one_to_thirty_days(world, api_as, shared, days) -> None:
    response = create(api_as, world.member, shared, days)
    assert response.status_code == 400 and response.json()["error"]["field"] == "days"


def test_expired_and_revoked_links_are_404_like_a_missing_one(world, api_as, shared) -> None:
    expiring, revoked = create(api_as, world.member, shared), create(api_as, world.member, shared)
    with scopes_disabled():
        ShareLink.objects.filter(pk=expiring.json()["link"]["id"]).update(
            expires_at=timezone.now() - timedelta(seconds=1)
        )
    base = f"/api/v1/projects/{world.project.slug}/sessions/{shared.pk}/shares"
    assert api_as(world.member).delete(f"{base}/{revoked.json()['link']['id']}").status_code == 204

    for made in (expiring, revoked):
        page = Client().get(f"/share/{token_of(made)}")
        assert page.status_code == 404 and page.content == missing_page()
    listed = api_as(world.viewer).get(base).json()["results"]
    assert [link["active"] for link in listed] == [False, False]
    with scopes_disabled():
        assert not AccessLog.objects.filter(via="share").exists()


def test_no_link_works_or_is_made_when_an_admin_disabled_sharing(world, api_as, shared, client) -> None:
    made = create(api_as, world.member, shared)
    client.force_login(world.admin)
    client.post(f"/p/{world.project.slug}/settings/shares", {"action": "sharing", "enabled": "0"})
    with scopes_disabled():
        assert Project.objects.get(pk=world.project.pk).sharing_enabled is False

    assert Client().get(f"/share/{token_of(made)}").content == missing_page()
    refused = create(api_as, world.member, shared)
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "sharing_disabled"


def test_only_members_create_and_outsiders_see_no_links(world, api_as, shared) -> None:
    assert create(api_as, world.viewer, shared).status_code == 403
    assert create(api_as, world.outsider, shared).status_code == 404
    assert create(api_as, world.member, shared, days=3).status_code == 201
    base = f"/api/v1/projects/{world.project.slug}/sessions/{shared.pk}/shares"
    assert api_as(world.outsider).get(base).status_code == 404
    assert api_as(world.other_admin).get(base).status_code == 404


def test_members_create_list_and_revoke_links_in_the_ui(world, shared, client) -> None:
    client.force_login(world.member)
    made = client.post(f"/p/{world.project.slug}/s/{shared.pk}/share", {"days": "5"})
    assert made.status_code == 201
    url = re.search(r'<code id="share-url">([^<]+)</code>', made.content.decode())[1]
    token = url.rsplit("/share/", 1)[1]
    assert Client().get(f"/share/{token}").status_code == 200

    listing = client.get(f"/p/{world.project.slug}/settings/shares")
    assert listing.status_code == 200 and "Explain the retry policy" in listing.content.decode()
    assert token not in listing.content.decode()  # shown once, never again
    with scopes_disabled():
        link = ShareLink.objects.get()
    client.post(f"/p/{world.project.slug}/settings/shares", {"action": "revoke", "link": str(link.pk)})
    assert Client().get(f"/share/{token}").status_code == 404

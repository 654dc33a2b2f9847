"""What an anonymous reader of a share link may cost the server: each page rendered once (the page
cache of the member's page), and a bounded number of views per link."""

from __future__ import annotations

import pytest
from django.test import Client
from django_scopes import scopes_disabled

from sessions_app.models import AccessLog
from tests.frontend.conftest import long_transcript


@pytest.fixture
def long_session(world, make_session):
    return make_session(world.project, world.member, long_transcript(60), seed="shared-long")


def share(api_as, user, session) -> str:
    url = f"/api/v1/projects/{session.project.slug}/sessions/{session.pk}/shares"
    return api_as(user).post(url, {"days": 7}, format="json").json()["url"].rsplit("/share/", 1)[1]


def test_every_reader_of_a_shared_page_after_the_first_gets_it_without_a_render(
    world, api_as, long_session, renders
) -> None:
    token = share(api_as, world.member, long_session)
    pages = [Client().get(f"/share/{token}").content for _ in range(3)]
    assert len(renders) == 1 and len(set(pages)) == 1
    second_page = Client().get(f"/share/{token}?page=2")
    assert second_page.status_code == 200 and len(renders) == 2 and second_page.content != pages[0]
    with scopes_disabled():  # every view is still in the access log
        assert sum(entry.count for entry in AccessLog.objects.filter(via="share")) == 4


def test_a_cached_shared_page_is_gone_with_its_link(world, api_as, long_session) -> None:
    token = share(api_as, world.member, long_session)
    assert Client().get(f"/share/{token}").status_code == 200
    with scopes_disabled():
        membership = world.project.memberships.get(user=world.member)
    membership.delete()  # the creator leaves: the link is revoked, the cached page unreachable
    assert Client().get(f"/share/{token}").status_code == 404


def test_a_flood_of_views_of_one_link_is_a_429_with_retry_after(world, api_as, long_session, settings) -> None:
    settings.SESSIONLEDGER_SHARE_VIEW_RATE = "3/min"
    token, other = share(api_as, world.member, long_session), share(api_as, world.member, long_session)
    codes = [Client().get(f"/share/{token}").status_code for _ in range(3)]
    refused = Client().get(f"/share/{token}/m/1", REMOTE_ADDR="198.51.100.4")  # per link, whoever asks
    assert codes == [200, 200, 200] and refused.status_code == 429
    assert int(refused["Retry-After"]) > 0 and refused["X-Robots-Tag"] == "noindex, nofollow"
    assert Client().get(f"/share/{other}").status_code == 200

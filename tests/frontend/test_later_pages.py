"""The later pages the session page's script appends arrive in one response holding only their cards
(``?page=N&through=M``, docs/ui.md "Later pages"): the same cards the pages show one by one, no page
around them, a read in the access log, revalidated like any page, and the page's head preloads it."""

from __future__ import annotations

import re
import uuid

import pytest
from django.urls import reverse
from django_scopes import scopes_disabled

from sessions_app.models import AccessLog, Session
from tests.frontend.conftest import long_transcript

pytestmark = pytest.mark.django_db


@pytest.fixture
def long_session(world, make_session) -> Session:
    return make_session(world.project, world.member, long_transcript(40), seed="later")  # 4 pages


def _url(world, session: Session, query: str = "") -> str:
    return f"/p/{world.project.slug}/s/{session.pk}{query}"


def _message_ids(html: str) -> list[str]:
    """The ids of the cards of ``#cards`` (the messages, in order)."""
    cards = html.split('id="cards"', 1)[1].split('id="more"', 1)[0]
    return re.findall(r'<article class="card[^"]*" id="(m-[^"]+)"', cards)


def test_pages_two_to_four_in_one_response_are_the_cards_of_each_page_in_order(client, world, long_session) -> None:
    client.force_login(world.viewer)
    one_by_one = [_message_ids(client.get(_url(world, long_session, f"?page={n}")).content.decode()) for n in (2, 3, 4)]
    together = client.get(_url(world, long_session, "?page=2&through=4"))
    assert together.status_code == 200
    html = together.content.decode()
    assert _message_ids(html) == [card for page in one_by_one for card in page]
    assert 'class="topbar"' not in html and "Turns</h2>" not in html  # no page around the cards
    assert 'id="more"' not in html  # the last page: nothing after it


def test_the_first_page_preloads_the_later_pages_its_link_fetches(client, world, long_session) -> None:
    client.force_login(world.viewer)
    html = client.get(_url(world, long_session, "?q=pytest")).content.decode()
    [preload] = re.findall(r'<link rel="preload" as="fetch" crossorigin href="([^"]+)">', html)
    [ahead] = re.findall(r'data-ahead="([^"]+)"', html)
    assert preload == ahead and ahead.startswith("?q=pytest&amp;page=2&amp;through=")  # the filters kept


def test_a_session_longer_than_one_batch_links_past_it(client, world, make_session) -> None:
    session = make_session(world.project, world.member, long_transcript(100), seed="later-long")  # 10 pages
    client.force_login(world.viewer)
    first = client.get(_url(world, session)).content.decode()
    assert 'data-ahead="?page=2&amp;through=9"' in first  # eight pages at most per request
    batch = client.get(_url(world, session, "?page=2&through=50")).content.decode()
    assert batch.count('class="card prompt"') == 80  # clamped to eight pages of ten turns
    assert 'href="?page=10"' in batch and 'data-ahead="?page=10&amp;through=10"' in batch


def test_the_later_pages_are_a_read_revalidated_like_any_page(client, world, long_session) -> None:
    client.force_login(world.viewer)
    url = _url(world, long_session, "?page=2&through=4")
    first = client.get(url, HTTP_ACCEPT_ENCODING="gzip")
    assert first["Content-Encoding"] == "gzip" and first["Cache-Control"] == "private, no-cache"
    assert client.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    with scopes_disabled():
        [entry] = AccessLog.objects.filter(session_id=long_session.pk, user=world.viewer, via="web")
    assert entry.count == 2  # the response fetched ahead and its revalidation: each a read


def test_an_outsider_gets_404_for_the_later_pages(client, world, long_session) -> None:
    client.force_login(world.outsider)
    assert client.get(_url(world, long_session, "?page=2&through=4")).status_code == 404


def test_a_nonsense_range_is_refused_not_rendered(client, world, long_session) -> None:
    client.force_login(world.viewer)
    assert client.get(_url(world, long_session, "?page=2&through=x")).status_code == 400
    past = client.get(_url(world, long_session, "?page=9&through=12"))
    assert past.status_code == 200 and _message_ids(past.content.decode()) == []


def test_the_whole_conversation_sends_its_later_pages_together(client, world, make_session) -> None:
    raw = long_transcript(40)
    lines = raw.splitlines(keepends=True)
    cut = len(b"".join(lines[: len(lines) // 2]))
    agent = str(uuid.uuid4())
    for number, (start, end) in enumerate([(0, cut), (cut, len(raw))]):
        last = make_session(
            world.project,
            world.member,
            raw[start:end],
            seed=f"later-whole-{number}",
            start_offset=start,
            end_offset=end,
            agent_session_id=agent,
            commit_message=f"Commit {number}",
        )
    client.force_login(world.viewer)
    url = reverse("whole-conversation", kwargs={"project": world.project.slug, "session_id": last.pk})
    page = client.get(url).content.decode()
    assert 'data-ahead="?page=2&amp;through=4"' in page
    one_by_one = [_message_ids(client.get(f"{url}?page={n}").content.decode()) for n in (2, 3, 4)]
    together = client.get(f"{url}?page=2&through=4").content.decode()
    assert _message_ids(together) == [card for each in one_by_one for card in each] and "Turn 40" in together
    with scopes_disabled():
        reads = AccessLog.objects.filter(project=world.project, user=world.viewer, via="web")
        assert sorted(entry.count for entry in reads) == [5, 5]  # each segment read by each of the 5 views

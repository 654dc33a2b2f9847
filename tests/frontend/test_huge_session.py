"""A session of thousands of tiny turns: every view of it costs one page, never the whole session.

Any member can upload one, so a page that re-read, re-laid-out or sent the whole of it per request
would let any member burn the web tier's CPU for everyone (docs/scaling.md, huge sessions).
"""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache
from django.test import Client

from frontend.session_page import page_cache, reading
from frontend.session_page.conversation import PAGE_MESSAGES
from frontend.session_page.steps import MINIMAP_HEIGHT
from sessions_app import blobs
from sessions_app.models import Session
from tests.client.transcript_builder import TranscriptBuilder

pytestmark = pytest.mark.django_db

AGENT = "3c9e1f20-7a4b-4d5e-8f61-9a0b1c2d3e4f"
TURNS = 900  # 1,800 messages: 18 pages, more turns than a panel lists


def _tiny_turns() -> tuple[bytes, int]:
    """Tiny turns, and the byte offset where the second half (the second commit's segment) starts."""
    b = TranscriptBuilder(AGENT, start="2026-03-02T09:00:00Z", step_seconds=1)
    cut = 0
    for turn in range(1, TURNS + 1):
        b.prompt(f"tiny prompt {turn}").assistant_text(f"reply {turn}").turn_end()
        if turn == TURNS // 2:
            cut = len(b.build())
    return b.build(), cut


@pytest.fixture
def segments(world, make_session) -> list[Session]:
    raw, cut = _tiny_turns()
    return [
        make_session(
            world.project,
            world.member,
            raw[start:end],
            seed=f"huge{start}",
            start_offset=start,
            end_offset=end,
            agent_session_id=AGENT,
        )
        for start, end in ((0, cut), (cut, len(raw)))
    ]


@pytest.fixture
def lay_outs(monkeypatch) -> list[int]:
    """How many times a whole document was laid out (the real code still runs)."""
    calls: list[int] = []
    real = reading.lay_out

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(reading, "lay_out", counted)
    return calls


def _whole(client, world, segments: list[Session], query: str = ""):
    client.force_login(world.viewer)
    response = client.get(f"/p/{world.project.slug}/s/{segments[0].pk}/conversation{query}")
    assert response.status_code == 200
    return response.content.decode()


def _between(html: str, start: str, end: str) -> str:
    return html[html.index(start) : html.index(end, html.index(start))]


def _forget_content(segments: list[Session]) -> None:
    """Neither the content blobs nor their decoded documents are there any more: what a page shows
    after this can only come from what the page cache kept of its layout."""
    for session in segments:
        cache.delete(page_cache.document_key(session))
        blobs.delete(session.content_storage_key)


def test_the_whole_conversation_of_thousands_of_turns_sends_one_page_and_links_the_next(
    client, world, segments
) -> None:
    html = _whole(client, world, segments)
    cards = re.findall(r'<article class="card', html)
    assert 0 < len(cards) <= PAGE_MESSAGES
    assert 'rel="next"' in html and "?page=2" in html
    turn_nav = _between(html, 'id="turn-nav"', "</ol>")
    assert turn_nav.count("<li") == reading.PANEL_ENTRIES < TURNS  # not one link per turn
    assert _between(html, 'id="prompt-overview"', "</ol>").count("<li") == reading.PANEL_ENTRIES
    assert f">{TURNS}</span>" in html  # the panel still counts every turn
    assert _between(html, 'id="minimap"', "</div>").count("<a") <= MINIMAP_HEIGHT
    assert "tiny prompt 1<" in html and f"tiny prompt {TURNS}<" not in html


def test_a_later_page_lists_the_turns_around_it_not_the_first_ones(client, world, segments) -> None:
    html = _whole(client, world, segments, "?page=17")
    turn_nav = _between(html, 'id="turn-nav"', "</ol>")
    assert f"tiny prompt {TURNS - 10}" in turn_nav and "tiny prompt 1<" not in turn_nav
    assert f"tiny prompt {TURNS - 10}<" in _between(html, 'id="prompt-overview"', "</ol>")


def test_a_second_view_of_the_whole_conversation_is_served_without_its_content(client, world, segments) -> None:
    first = _whole(client, world, segments)
    _forget_content(segments)
    second = _whole(client, world, segments)
    assert _between(first, 'id="cards"', 'id="more"') == _between(second, 'id="cards"', 'id="more"')
    assert "unavailable" not in second


def test_another_page_of_the_same_filter_is_laid_out_once(client, world, segments, lay_outs) -> None:
    _whole(client, world, segments)
    _forget_content(segments)
    for page in (5, 11, 18):  # pages nobody asked for yet, each from the kept layout and its own cards
        html = _whole(client, world, segments, f"?page={page}")
        assert f"page {page} of 18" in html and "unavailable" not in html
    assert len(lay_outs) == 1


def test_the_session_page_and_its_shared_pages_reuse_one_layout(client, world, segments, lay_outs, api_as) -> None:
    session = segments[1]
    client.force_login(world.viewer)
    assert client.get(f"/p/{world.project.slug}/s/{session.pk}?page=3").status_code == 200
    url = f"/api/v1/projects/{world.project.slug}/sessions/{session.pk}/shares"
    token = api_as(world.member).post(url, {"days": 7}, format="json").json()["url"].rsplit("/share/", 1)[1]
    _forget_content([session])
    for page in (1, 6):
        shared = Client().get(f"/share/{token}?page={page}")
        assert shared.status_code == 200 and f"page {page} of 9" in shared.content.decode()
    assert len(lay_outs) == 1


def test_a_permalink_to_a_late_message_lands_on_its_page(client, world, segments) -> None:
    _whole(client, world, segments)  # the layout kept: the permalink is found in it
    late = TURNS - 3  # its prompt is in the second segment, on the last page
    html = _whole(client, world, segments, f"?at={2 * (late - 1)}")
    assert "page 18 of 18" in html and f"tiny prompt {late}<" in html
    anchor = re.search(r'data-at="(m-[0-9A-Za-z-]+)', html)
    assert anchor and f'id="{anchor[1]}"' in html  # the prompt's card, named by its uuid


def test_a_changed_segment_is_never_served_from_the_old_layout(client, world, segments, lay_outs) -> None:
    _whole(client, world, segments, "?page=4")
    segments[1].processed_at = segments[1].processed_at.replace(year=2030)  # as reprocess would set it
    segments[1].save(update_fields=["processed_at"])
    _whole(client, world, segments, "?page=4")
    assert len(lay_outs) == 2

"""A long session's later pages arrive without the reader scrolling to each one (frontend app.js,
``loadMore``): the head preloads the next pages as one response of their cards, and once the first
page is painted they are appended in order, so Find in the browser, the keys and a scroll to the
end meet every message."""

from __future__ import annotations

import re

import pytest

from tests.frontend.browser.conftest import log_in
from tests.frontend.conftest import long_transcript

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_every_later_page_is_in_the_page_without_scrolling(page, world, make_session) -> None:
    session = make_session(world.project, world.member, long_transcript(40), seed="ahead")  # 4 pages
    log_in(page, world.viewer.email)
    later: list[str] = []
    page.on("request", lambda request: later.append(request.url) if "page=" in request.url else None)
    first = page.goto(f"/p/{world.project.slug}/s/{session.pk}")
    assert first is not None and "Turn 40 done." not in first.text()  # the first response holds page 1 only
    page.wait_for_selector("#more", state="detached")
    # pages 2-4 in one request, the head's preload, which the script's fetch took over
    assert [url.split("?", 1)[1] for url in later] == ["page=2&through=4"]
    assert page.evaluate("window.scrollY") == 0
    cards = page.locator("#cards").inner_text()
    assert "Turn 40 done." in cards
    turns = [int(n) for n in re.findall(r"Turn (\d+): please change", cards)]
    assert turns == list(range(1, 41))  # each page once, in order

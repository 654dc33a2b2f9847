"""A long session's later pages arrive without the reader scrolling to each one (frontend app.js,
``loadAhead``): once the first page has loaded, the next pages are fetched together and appended
in order, so Find in the browser, the keys and a scroll to the end meet every message."""

from __future__ import annotations

import re

import pytest

from tests.frontend.browser.conftest import log_in
from tests.frontend.conftest import long_transcript

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_every_later_page_is_in_the_page_without_scrolling(page, world, make_session) -> None:
    session = make_session(world.project, world.member, long_transcript(40), seed="ahead")  # 4 pages
    log_in(page, world.viewer.email)
    page.goto(f"/p/{world.project.slug}/s/{session.pk}")
    assert page.locator("#more [data-more]").count() == 1  # the first response holds page 1 only
    page.wait_for_selector("#more", state="detached")
    assert page.evaluate("window.scrollY") == 0
    cards = page.locator("#cards").inner_text()
    assert "Turn 40 done." in cards
    turns = [int(n) for n in re.findall(r"Turn (\d+): please change", cards)]
    assert turns == list(range(1, 41))  # each page once, in order

"""A tool call and its result stay together under the time window and Find; a hit opens its block."""

from __future__ import annotations

import re

import pytest

from tests.client.transcript_builder import TranscriptBuilder

pytestmark = pytest.mark.django_db


def _page(client, world, session, query: str) -> str:
    client.force_login(world.viewer)
    response = client.get(f"/p/{world.project.slug}/s/{session.pk}{query}")
    assert response.status_code == 200
    return response.content.decode().split('id="cards"')[1]


@pytest.fixture
def session(world, make_session):
    b = TranscriptBuilder(start="2026-02-10T09:00:00Z", step_seconds=10)
    b.prompt("Why does the retry test fail?")
    b.tool_call("Read", {"file_path": "/work/app/retry.py"}, result="def retry():\n    raise TimeoutError('boom')")
    b.new_response().tool_call("Bash", {"command": "pytest tests/test_retry.py"}, result="E   AssertionError: flaky")
    b.new_response().assistant_text("Found it.").turn_end()
    return make_session(world.project, world.member, b.build(), seed="pairs")


def test_a_find_hit_in_an_output_comes_with_its_call_opened(client, world, session) -> None:
    cards = _page(client, world, session, "?q=TimeoutError")
    # the call names the file; the result sits under it, with the match marked, and the block is open
    assert re.search(r'<details class="tool" open><summary>.*?Read.*?/work/app/retry.py', cards, re.S)
    assert "<mark>TimeoutError</mark>" in cards and "no result" not in cards
    assert 'class="card tool-only"' not in cards
    assert "pytest tests/test_retry.py" not in cards  # other calls stay out
    # a hit in the command opens the block too
    cards = _page(client, world, session, "?q=test_retry")
    assert re.search(r'<details class="tool" open>', cards) and "AssertionError: flaky" in cards


def test_the_time_window_keeps_a_call_with_its_later_result(client, world, session) -> None:
    # the window closes between the Read call (09:00:10) and its result (09:00:20)
    cards = _page(client, world, session, "?until=2026-02-10T09:00:15")
    assert "/work/app/retry.py" in cards and "raise TimeoutError" in cards and "no result" not in cards
    # opening after the call still shows the result with its call, not a bare "Read result"
    cards = _page(client, world, session, "?since=2026-02-10T09:00:15&until=2026-02-10T09:00:25")
    assert 'class="card tool-only"' not in cards and "/work/app/retry.py" in cards


def test_hiding_tool_results_by_role_does_not_claim_there_was_none(client, world, session) -> None:
    cards = _page(client, world, session, "?role=user&role=assistant")
    assert "/work/app/retry.py" in cards and "raise TimeoutError" not in cards and "no result" not in cards

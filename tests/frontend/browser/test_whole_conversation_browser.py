"""The whole conversation in Chromium: every segment on one lazily loaded page, Find across segments."""

from __future__ import annotations

import re

import pytest

from tests.client.transcript_builder import TranscriptBuilder
from tests.frontend.browser.conftest import axe_violations, log_in, screenshot
from tests.uploads import commit_hash

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AGENT = "3b9d6f10-2c4e-4a8b-b1d7-5e6f7a8b9c0d"


def _segments() -> tuple[bytes, list[int]]:
    """Three segments of six turns (ten messages each): 180 messages, more than one lazy page."""
    b = TranscriptBuilder(AGENT, start="2026-03-03T08:00:00Z", step_seconds=2)
    cuts = []
    for segment in range(1, 4):
        for turn in range(1, 7):
            b.prompt(f"Segment {segment} turn {turn}: change module_{segment}_{turn}.py")
            b.thinking("Plan.").assistant_text(f"Working on module_{segment}_{turn}.")
            for call in range(3):
                b.new_response().tool_call("Bash", {"command": f"pytest t_{segment}_{turn}_{call}.py"}, result="ok")
            b.new_response().assistant_text(f"needle of segment {segment} turn {turn} done.").turn_end()
        cuts.append(len(b.build()))
    return b.build(), cuts


def _upload(world, make_session) -> str:
    """Upload the segments; the whole conversation's path, named by the first of them."""
    raw, cuts = _segments()
    paths = []
    starts = [0, *cuts[:-1]]
    for number, (start, end) in enumerate(zip(starts, cuts, strict=True), start=1):
        session = make_session(
            world.project,
            world.member,
            raw[start:end],
            seed=f"whole-browser-{number}",
            commit_hash=commit_hash(f"whole-browser-{number}"),
            commit_message=f"Change segment {number} modules",
            start_offset=start,
            end_offset=end,
            agent_session_id=AGENT,
        )
        paths.append(f"/p/{world.project.slug}/s/{session.pk}/conversation")
    return paths[0]


def test_the_whole_conversation_loads_its_later_pages_and_find_spans_segments(
    browser, live_server, world, make_session
) -> None:
    whole = _upload(world, make_session)
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1400, "height": 900})
    context.set_default_timeout(10_000)
    page = context.new_page()
    log_in(page, world.viewer.email)
    page.goto(whole)
    assert page.locator("#prompt-overview > li").count() == 18
    screenshot(page, "whole-conversation", full_page=False)

    page.locator("#segment-3").wait_for(state="attached")  # the last boundary arrived with a later page
    boundaries = page.locator(".segment-boundary")
    assert boundaries.count() == 3
    assert "Change segment 3 modules" in boundaries.nth(2).inner_text()

    page.fill("#m-q", "needle of segment")
    page.wait_for_url(re.compile(r"q=needle"))
    page.locator("#cards mark").first.wait_for()
    text = page.locator("#cards").inner_text()
    assert "segment 1 turn 1 done" in text and "segment 3 turn 6 done" in text
    assert page.locator(".segment-boundary").count() == 3  # the markers stay between the found cards
    context.close()


def test_an_overview_entry_opens_a_prompt_on_a_later_page_and_a_phone_does_not_scroll_sideways(
    browser, live_server, world, make_session
) -> None:
    whole = _upload(world, make_session)
    context = browser.new_context(base_url=live_server.url, viewport={"width": 390, "height": 844})
    context.set_default_timeout(10_000)
    page = context.new_page()
    log_in(page, world.viewer.email)
    page.goto(whole)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.locator("#prompt-overview > li").nth(17).locator("a.prompt-text").click()
    # loaded ahead by now, it is revealed in place; else the page holding it opens (?at=)
    page.wait_for_url(re.compile(r"#m-[0-9a-f-]+$"))
    prompt = page.locator("article.prompt", has_text="Segment 3 turn 6:")
    prompt.wait_for()
    assert prompt.is_visible()
    context.close()


def test_markdown_reads_as_text_in_previews_the_overview_and_plan_summaries(
    browser, live_server, world, make_session
) -> None:
    b = TranscriptBuilder(AGENT, start="2026-03-03T08:00:00Z", step_seconds=2)
    b.prompt("Make **retries** bounded in `retry.py`")
    b.thinking("**Plan**: bound the `jitter` first.").assistant_text("On it.")
    todos = [
        {"content": "Bound the jitter", "status": "completed"},
        {"content": "Make the timeout configurable", "status": "in_progress"},
        {"content": "Run the tests", "status": "pending"},
    ]
    b.new_response().tool_call("TodoWrite", {"todos": todos}, result="Todos have been modified")
    b.new_response().assistant_text("Done: **bounded** in `retry.py`.").turn_end()
    raw = b.build()
    session = make_session(
        world.project,
        world.member,
        raw,
        seed="markdown-previews",
        commit_hash=commit_hash("markdown-previews"),
        start_offset=0,
        end_offset=len(raw),
        agent_session_id=AGENT,
    )
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1400, "height": 900})
    context.set_default_timeout(10_000)
    page = context.new_page()
    log_in(page, world.viewer.email)
    page.goto(f"/p/{world.project.slug}/s/{session.pk}")
    thinking = page.locator("#cards summary", has_text="Thinking").first
    assert thinking.locator("strong", has_text="Plan").count() == 1 and "**" not in thinking.inner_text()
    plan = page.locator("#cards code.tool-summary").first
    assert plan.inner_text() == "3 steps, 1 done · now: Make the timeout configurable"
    page.keyboard.press("x")
    assert axe_violations(page) == []

    page.goto(f"/p/{world.project.slug}/s/{session.pk}/conversation")
    entry = page.locator("#prompt-overview li").first
    assert entry.locator("a.prompt-text strong", has_text="retries").count() == 1
    assert entry.locator("code", has_text="retry.py").count() == 2 and "**" not in entry.inner_text()
    page.keyboard.press("x")
    assert axe_violations(page) == []
    context.close()

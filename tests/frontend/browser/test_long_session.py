"""Reading a long autonomous session in Chromium, at 1400 px and at 390 px (a phone).

The session is built like the real long ones (``tests/frontend/longsession.py``): ~520 messages
over 42 minutes, two prompts, sub-agents, a compaction, long Read outputs, failing runs, commits.
Each test shows one thing a lead does and saves a screenshot to test-artifacts/.
"""

from __future__ import annotations

import re

import pytest
from django_scopes import scopes_disabled

from sessions_app import selectors
from sessions_app.models import AccessLog
from tests.frontend.browser.conftest import log_in, screenshot
from tests.frontend.longsession import long_session

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDE = {"width": 1400, "height": 900}
PHONE = {"width": 390, "height": 844}
SUBJECT = "Bound retry jitter so the retry test stops flaking"


@pytest.fixture
def long(world, make_session):
    raw, agents = long_session()
    return make_session(
        world.project,
        world.member,
        raw,
        subagents=agents,
        seed="long-real-shaped",
        feature_branch="fix/retry-jitter",
        commit_message=f"{SUBJECT}\n\nFour rounds of tightening; the timeout is configurable.",
    )


@pytest.fixture
def wide(browser, live_server):
    context = browser.new_context(base_url=live_server.url, viewport=WIDE)
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


@pytest.fixture
def phone(browser, live_server):
    context = browser.new_context(base_url=live_server.url, viewport=PHONE, is_mobile=True, has_touch=True)
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


def _url(world, session, query: str = "") -> str:
    return f"/p/{world.project.slug}/s/{session.pk}{query}"


def _top(page, locator) -> float:
    return locator.bounding_box()["y"]


def test_headline_steps_and_minimap_at_1400(wide, world, long) -> None:
    log_in(wide, world.viewer.email)
    wide.goto(_url(world, long))
    assert wide.locator("h1").inner_text() == SUBJECT
    assert wide.locator(".subhead").inner_text().startswith("The retry test is flaky on CI")
    kinds = wide.locator("#step-nav a").evaluate_all("links => links.map(a => a.dataset.kind)")
    assert kinds.count("prompt") == 2 and kinds.count("commit") == 8 and kinds.count("error") == 10
    assert kinds.count("edit") >= 40 and wide.locator("svg.minimap rect").count() == len(kinds)
    screenshot(wide, "long-session-1400", full_page=False)

    # e: the next error, on this page or a later one; the block holding it opens and is in view
    wide.keyboard.press("e")
    wide.wait_for_url(re.compile(r"#m-[0-9a-f-]+$"))
    anchor = wide.url.rsplit("#", 1)[1]
    target = wide.locator(f"[id='{anchor}']")
    target.wait_for()
    wide.wait_for_timeout(300)
    assert target.inner_text().lower().startswith("error") and -2 <= _top(wide, target) < WIDE["height"]
    screenshot(wide, "long-session-next-error", full_page=False)
    # c: the next commit, labelled with its hash and subject; every press moves to another one
    wide.keyboard.press("c")
    wide.wait_for_timeout(500)
    first = wide.locator("#step-nav a.current").inner_text()
    assert "Bound retry jitter, round" in first and "git commit" not in first
    wide.keyboard.press("c")
    wide.wait_for_timeout(500)
    assert wide.locator("#step-nav a.current").inner_text() != first

    # expand all / collapse all, which the later pages arriving after the click follow too
    wide.goto(_url(world, long))
    wide.click("button[data-fold=open]")
    wide.wait_for_load_state("networkidle")
    assert wide.locator("#cards details").count() > 110
    assert wide.locator("#cards details:not([open])").count() == 0
    wide.click("button[data-fold=close]")
    assert wide.locator("#cards details[open]").count() == 0


def test_sub_agent_folded_with_its_facts_and_report_once(wide, world, long) -> None:
    log_in(wide, world.viewer.email)
    wide.goto(_url(world, long))
    call = wide.locator("details.agent-call.has-agent").first
    header = call.locator(":scope > summary").inner_text()
    for fact in ("Locate retry code", "Explore", "33.9k tokens", "9 tool uses", "39 s"):
        assert fact in header
    assert call.get_attribute("open") is None
    call.locator(":scope > summary").click()
    call.locator("details.subagent > summary").click()
    assert wide.get_by_text("The retry policy lives in").count() == 1  # the report, shown once
    assert call.locator("details.event.meta", has_text="System reminder").count() == 2
    call.scroll_into_view_if_needed()
    screenshot(wide, "long-session-subagent", full_page=False)

    # the compaction agent sits where it ran (the document appends it at the end); the permalink to
    # its first message unfolds it
    messages = selectors.session_document(session=long)["messages"]
    first = next(m for m in messages if m.get("agent_id") == "acompact-e1f845")
    wide.goto(_url(world, long, f"?at={first['uuid']}#m-{first['uuid']}"))
    run = wide.locator("article.agent-run", has_text="Compaction agent")
    run.wait_for()
    times = run.evaluate(
        """run => [run.previousElementSibling, run, run.nextElementSibling].map(
            card => card && card.querySelector("time[datetime]").getAttribute("datetime"))"""
    )
    assert times[0] <= times[1] <= times[2], times
    assert run.locator("details").first.get_attribute("open") is not None


def test_find_opens_the_hit_and_long_output_has_line_numbers(wide, world, long) -> None:
    log_in(wide, world.viewer.email)
    wide.goto(_url(world, long, "?q=waited+12.12s"))
    mark = wide.locator("mark.current")
    mark.wait_for()
    wide.wait_for_timeout(300)
    assert mark.inner_text() == "waited 12.12s" and -2 <= _top(wide, mark) < WIDE["height"]
    tool = wide.locator("details.tool[open]", has=mark)
    assert "pytest -q tests/test_retry.py" in tool.locator("summary").inner_text()  # the call, with its result
    screenshot(wide, "long-session-find", full_page=False)

    wide.goto(_url(world, long))
    read = wide.locator("details.tool", has_text="backoff.py").first
    read.locator(":scope > summary").click()
    assert read.locator(".result-of").inner_text().startswith("backoff.py · lines 1–")
    assert read.locator("pre.ln").inner_text().startswith("1\n2\n3")
    assert "\u2192" not in read.locator("pre.hl").inner_text()
    read.locator(".more a").click()
    wide.wait_for_url(re.compile(r"/m/\d+$"))
    assert wide.locator("h1").inner_text() == "Read result · backoff.py · lines 1–900"
    assert wide.locator("main").bounding_box()["width"] > 1300  # the full-width viewer
    screenshot(wide, "long-output-viewer", full_page=False)


def test_a_message_permalink_on_a_later_page(wide, world, long) -> None:
    messages = selectors.session_document(session=long)["messages"]
    last = next(m for m in reversed(messages) if m["kind"] == "prompt")
    log_in(wide, world.viewer.email)
    # the short permalink, and the session URL with only the #m-{uuid} fragment, both find it
    for path in (f"/p/{world.project.slug}/m/{last['uuid']}", _url(world, long, f"#m-{last['uuid']}")):
        wide.goto(path)
        target = wide.locator(f"[id='m-{last['uuid']}']")
        target.wait_for()
        wide.wait_for_timeout(300)
        assert target.evaluate("t => t.matches('article.card.prompt')")  # the prompt's card itself
        assert "Keep going" in target.inner_text()
        assert -2 <= _top(wide, target) < WIDE["height"]
    assert "at=" in wide.url


def test_the_phone_shows_the_conversation_first(phone, world, long) -> None:
    log_in(phone, world.viewer.email)
    phone.goto(_url(world, long))
    first = phone.locator("article.card.prompt").first
    assert _top(phone, first) < PHONE["height"] * 0.75, "the first prompt is on the first screen"
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    screenshot(phone, "long-session-390", full_page=False)

    phone.goto(f"/p/{world.project.slug}/")
    row = phone.locator("table.sessions tbody tr").first
    for cell in ("td.branch-cell", "td:nth-child(5)", "td:nth-child(9)"):
        box = row.locator(cell).bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], cell
    assert row.locator("td.branch-cell").inner_text() == "fix/retry-jitter"
    screenshot(phone, "session-list-390", full_page=False)


def test_reading_and_lazy_loading_is_one_access_log_row(wide, world, long) -> None:
    log_in(wide, world.viewer.email)
    wide.goto(_url(world, long))
    wide.mouse.wheel(0, 400_000)
    # every later page appended (its link gone): counting cards first would race the head's preload,
    # which may append them all before the count
    wide.locator("#more [data-more]").wait_for(state="detached")
    wide.fill("#m-q", "round 7")
    # the filtered page swapped in (its URL kept): on a loaded machine that takes more than any fixed wait
    wide.wait_for_function(
        "() => new URLSearchParams(location.search).get('q') === 'round 7'"
        " && !document.querySelector('#conversation[aria-busy]')"
    )
    with scopes_disabled():
        rows = list(AccessLog.objects.filter(session_id=long.pk, user=world.viewer))
    assert len(rows) == 1 and rows[0].count >= 3


def test_insights_show_cost_and_time_at_both_widths(wide, phone, world, long) -> None:
    for page, name, width in (
        (wide, "insights-effort-1400", WIDE["width"]),
        (phone, "insights-effort-390", PHONE["width"]),
    ):
        log_in(page, world.viewer.email)
        page.goto(f"/p/{world.project.slug}/insights")
        card = page.locator("#effort_per_author_week")
        drawn = card.locator("svg.chart").text_content()
        assert "steps/commit" in drawn and "$" in drawn
        assert page.locator(".tile", has_text="Estimated cost").inner_text().count("$") == 1
        assert "fix/retry-jitter$" in page.locator("#effort_per_branch svg.chart").text_content()
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        card.scroll_into_view_if_needed()
        screenshot(page, name, full_page=False)


def test_the_access_log_filters_by_reader(wide, world, long) -> None:
    log_in(wide, world.viewer.email)
    for query in ("", "?q=round", "?page=2"):
        wide.goto(_url(world, long, query))
    # the page fetches its later pages ahead of the reader; a fetch still in flight when the
    # cookies go would come back through the login page and replace the next sign-in's CSRF cookie
    wide.wait_for_load_state("networkidle")
    wide.goto("about:blank")
    wide.context.clear_cookies()
    log_in(wide, world.admin.email)
    wide.goto(f"/p/{world.project.slug}/access-log")
    wide.select_option("#a-who", world.viewer.email)
    wide.click("form.access-filters button[type=submit]")
    wide.wait_for_url(re.compile(r"who="))
    rows = wide.locator("table.access-log tbody tr")
    assert rows.count() == 1
    # three views, each page the browser fetched (the later ones ahead of the reader) another read
    assert int(re.search(r"×(\d+)", rows.first.inner_text()).group(1)) >= 3
    screenshot(wide, "access-log-1400", full_page=False)

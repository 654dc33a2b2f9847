"""The UI in a real browser: sign in, filter, read, narrow, jump, link, invite — and no XSS."""

from __future__ import annotations

import re

import pytest

from tests.client.transcript_builder import TranscriptBuilder
from tests.frontend.browser.conftest import axe_violations, log_in, screenshot
from tests.frontend.conftest import long_transcript, rich_transcript, xss_transcript

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _raw(prompt: str) -> bytes:
    return TranscriptBuilder().prompt(prompt).assistant_text("Done.").turn_end().build()


@pytest.fixture
def rich(world, make_session):
    raw, subagents = rich_transcript()
    return make_session(
        world.project,
        world.member,
        raw,
        subagents=subagents,
        seed="rich",
        commit_message="Add --verbose flag\n\nAlso documents it.",
    )


def test_log_in_filter_the_list_and_open_a_session(page, world, make_session, rich) -> None:
    make_session(
        world.project,
        world.admin,
        _raw("Tune the search ranking"),
        seed="s1",
        feature_branch="feature/search",
        commit_message="Tune ranking",
    )
    make_session(world.project, world.admin, _raw("Speed up the tokenizer"), seed="s2", feature_branch="feature/search")
    log_in(page, world.member.email)
    page.get_by_role("link", name="Acme Api").first.click()
    page.wait_for_url(f"**/p/{world.project.slug}/")
    assert page.locator("table.sessions tbody tr").count() == 3
    screenshot(page, "session-list")

    page.fill("#f-branch", "feature/search")
    page.click("form.filters button[type=submit]")
    page.wait_for_url(re.compile(r"branch=feature%2Fsearch"))
    assert page.locator("table.sessions tbody tr").count() == 2

    page.fill("#f-q", "tokenizer")
    page.click("form.filters button[type=submit]")
    assert page.locator("table.sessions tbody tr").count() == 1
    assert page.locator(".snippet mark").first.inner_text().lower() == "tokenizer"

    page.goto(f"/p/{world.project.slug}/")
    page.get_by_role("link", name=re.compile("Add --verbose flag")).click()
    page.wait_for_url(f"**/s/{rich.pk}")
    assert page.locator("article.card.prompt").count() == 2
    assert page.locator("details.thinking").first.get_attribute("open") is None
    screenshot(page, "session-page")


def test_hide_the_assistant_narrow_the_time_and_find_text(page, world, rich) -> None:
    log_in(page, world.viewer.email)
    page.goto(f"/p/{world.project.slug}/s/{rich.pk}")
    reply = page.locator("#cards").get_by_text("I'll look at the CLI first.")
    assert reply.is_visible()

    page.locator("label.chip", has_text="Assistant").click()  # applies at once, no reload
    page.wait_for_url(re.compile(r"role=user&role=tool&role=thinking&role=system"))
    reply.wait_for(state="detached")
    assert page.locator("article.card.prompt").count() == 2

    page.locator("label.chip", has_text="Assistant").click()
    page.wait_for_url(lambda url: "role=" not in url)
    page.fill("#m-since", "2026-02-10T21:00:19")
    page.locator("#m-since").dispatch_event("change")
    page.wait_for_url(re.compile(r"since=2026-02-10T21%3A00%3A19"))
    cards = page.locator("#cards")
    cards.get_by_text("Add a --verbose flag").wait_for(state="detached")
    assert cards.get_by_text("Now update the README").is_visible()

    page.fill("#m-q", "readme updated")
    page.wait_for_url(re.compile(r"q=readme\+updated"))
    page.locator("#cards mark").first.wait_for()
    assert page.locator("#cards article").count() == 1
    screenshot(page, "session-filtered", full_page=False)


def test_filters_work_without_javascript(browser, live_server, world, rich) -> None:
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    page = context.new_page()
    log_in(page, world.viewer.email)
    page.goto(f"/p/{world.project.slug}/s/{rich.pk}")
    page.locator("label.chip", has_text="Assistant").click()
    page.click("#message-filters button[type=submit]")
    page.wait_for_url(re.compile(r"role=user"))
    assert page.get_by_text("I'll look at the CLI first.").count() == 0
    context.close()


def test_jump_to_a_turn_on_a_later_page_and_load_more_while_scrolling(page, world, make_session) -> None:
    session = make_session(world.project, world.member, long_transcript(40), seed="long")
    log_in(page, world.viewer.email)
    page.goto(f"/p/{world.project.slug}/s/{session.pk}")
    # The first page holds a few turns; the later pages come ahead of the reader once it is painted, so
    # turn 35 is either revealed in place or its page opens (?page=): the reader lands on it either way.
    page.locator("#turn-nav a", has_text="Turn 35: please change").click()
    page.wait_for_url(re.compile(r"#m-[0-9a-f-]+$"))
    target = page.locator("article.card.prompt", has_text="Turn 35: please change module_35.py")
    target.wait_for()
    page.wait_for_timeout(200)
    assert _in_viewport(page, target)

    page.goto(f"/p/{world.project.slug}/s/{session.pk}")
    page.keyboard.press("j")
    page.keyboard.press("j")
    assert 0 <= page.locator("article.card.prompt").nth(1).bounding_box()["y"] < 50  # j, j: turn 1, then turn 2
    page.mouse.move(400, 500)  # over the conversation (the side panel scrolls on its own)
    page.mouse.wheel(0, 200_000)
    page.locator("article.card.prompt").nth(39).wait_for()  # all 40 turns: every later page appended


def test_j_and_k_cross_into_pages_not_loaded_yet(page, world, make_session) -> None:
    session = make_session(world.project, world.member, long_transcript(40), seed="long")
    log_in(page, world.viewer.email)
    page.goto(f"/p/{world.project.slug}/s/{session.pk}?page=2")
    first = page.locator("article.card.prompt").first.inner_text()
    number = int(re.search(r"Turn (\d+):", first).group(1))
    assert number > 1 and page.locator("article.card.prompt", has_text=f"Turn {number - 1}: please change").count() == 0

    # k before the first turn of a later page opened alone: the previous turn, on page 1
    page.keyboard.press("k")
    page.wait_for_url(re.compile(r"#m-[0-9a-f-]+$"))
    assert "page=" not in page.url
    target = page.locator("article.card.prompt", has_text=f"Turn {number - 1}: please change")
    target.wait_for()
    page.wait_for_timeout(300)
    assert _in_viewport(page, target)

    # j from there: the next turn, loaded or not, and every press moves on
    page.keyboard.press("j")
    following = page.locator("article.card.prompt", has_text=f"Turn {number}: please change")
    following.wait_for()
    page.wait_for_timeout(300)
    assert _in_viewport(page, following)
    page.keyboard.press("j")
    after = page.locator("article.card.prompt", has_text=f"Turn {number + 1}: please change")
    after.wait_for()
    page.wait_for_timeout(300)
    assert _in_viewport(page, after)


def _in_viewport(page, locator) -> bool:
    box = locator.bounding_box()
    return box is not None and 0 <= box["y"] < page.viewport_size["height"]


def test_a_commit_permalink_opens_its_session(page, world, rich) -> None:
    log_in(page, world.viewer.email)
    page.goto(f"/p/{world.project.slug}/c/{rich.commit_hash[:7]}")
    page.wait_for_url(f"**/p/{world.project.slug}/s/{rich.pk}")
    snippet = page.locator("#md-link").input_value()
    # a checkpoint's Markdown names its commit subject and links the commit permalink
    assert (
        snippet == f"[Add --verbose flag ({rich.commit_hash[:12]})](http://testserver/p/acme-api/c/{rich.commit_hash})"
    )


def test_an_admin_invites_a_member(page, world) -> None:
    log_in(page, world.admin.email)
    page.goto(f"/p/{world.project.slug}/")
    page.get_by_role("link", name="Settings").click()
    page.fill("#inv-email", "dana@example.com")
    page.select_option("#inv-role", "viewer")
    page.get_by_role("button", name="Send invitation").click()
    page.get_by_text("Invited dana@example.com as viewer").wait_for()
    link = page.locator("#invitations td.link-cell input").input_value()
    assert re.search(r"/invitations/[\w-]+/$", link)
    screenshot(page, "settings")


def test_a_hostile_transcript_cannot_run_script(page, world, make_session) -> None:
    session = make_session(world.project, world.member, xss_transcript(), seed="xss")
    log_in(page, world.viewer.email)
    page.goto(f"/p/{world.project.slug}/s/{session.pk}")
    for summary in page.locator("#cards details > summary").all():
        if summary.is_visible():
            summary.click()
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    page.wait_for_timeout(300)
    assert page.dialogs == []
    sources = page.evaluate("Array.from(document.scripts).map(s => s.getAttribute('src'))")
    assert sources == ["/static/frontend/app.js"]
    assert page.evaluate("document.querySelectorAll('[onerror],[onload],iframe,img,object,embed').length") == 0
    assert page.evaluate('document.querySelectorAll(\'a[href^="javascript" i],a[href^="data" i]\').length') == 0
    assert page.get_by_text("<script>alert('prompt')</script>").first.is_visible()
    page.fill("#m-q", "script")  # the search path re-renders hostile text too
    page.wait_for_url(re.compile(r"q=script"))
    page.wait_for_timeout(300)
    assert page.dialogs == []
    screenshot(page, "session-xss", full_page=False)


def test_a_search_hit_shows_line_breaks_opens_on_the_match_and_filters_are_chips(page, world, make_session) -> None:
    b = TranscriptBuilder(start="2026-02-10T09:00:00Z", step_seconds=2)
    for turn in range(1, 26):
        b.prompt(f"Turn {turn}: please change module_{turn}.py").assistant_text(f"Working on module_{turn}.")
        if turn == 22:  # a tool call searched by its JSON arguments, far down the conversation
            b.new_response().tool_call("TodoWrite", {"todos": [{"content": "Rewrite zeppelin\nthen run the tests"}]})
        b.new_response().assistant_text(f"Turn {turn} done.").turn_end()
    session = make_session(world.project, world.member, b.build(), seed="plan")
    log_in(page, world.viewer.email)
    page.goto(f"/p/{world.project.slug}/?q=zeppelin&author={world.member.email}")

    snippet = page.locator("p.snippet")
    assert "zeppelin" in snippet.inner_text()
    assert "\\n" not in snippet.inner_text() and snippet.locator("br").count() >= 1
    chips = page.locator(".filter-chips li")
    assert chips.count() == 2 and "Search: zeppelin" in chips.first.inner_text()
    assert axe_violations(page) == []

    # the hit opens the session with the query applied and its first match in view
    page.click(f"a[href*='/s/{session.pk}']")
    page.wait_for_url(re.compile(r"q=zeppelin"))
    assert page.locator("#message-filters input[name=q]").input_value() == "zeppelin"
    mark = page.locator("#cards mark.current")
    mark.wait_for()
    assert "zeppelin" in mark.inner_text().lower() and _in_viewport(page, mark)

    # a chip removes its own filter and keeps the others
    page.go_back()
    page.get_by_role("link", name="Remove filter Search: zeppelin").click()
    page.wait_for_url(re.compile(r"author="))
    assert "q=" not in page.url and page.locator(".filter-chips li").count() == 1


def test_a_message_in_two_sessions_opens_the_first_uploaded_and_offers_the_other(page, world, make_session) -> None:
    builder = TranscriptBuilder().prompt("Decide the retry policy")
    message = builder.last_uuid
    first = builder.assistant_text("Three tries.").turn_end().build()
    original = make_session(world.project, world.member, first, seed="original")
    # a resumed conversation re-uploads the earlier line, same uuid, in a session of its own
    again = make_session(
        world.project,
        world.member,
        first.replace(b"Three tries.", b"Three tries, resumed."),
        seed="resumed",
        agent_session_id="9e1f2a3b-0000-4000-8000-000000000003",
    )
    log_in(page, world.viewer.email)
    page.goto(f"/p/{world.project.slug}/m/{message}")
    page.wait_for_url(re.compile(rf"/s/{original.pk}\?"))
    note = page.locator(".also-in")
    assert "more than one session" in note.inner_text()
    assert axe_violations(page) == []

    note.get_by_role("link").click()
    choices = page.locator(".choice-list li")
    assert choices.count() == 2 and axe_violations(page) == []
    choices.nth(1).get_by_role("link").click()
    page.wait_for_url(re.compile(rf"/s/{again.pk}\?at={message}#m-{message}"))
    assert page.get_by_text("Three tries, resumed.").is_visible()

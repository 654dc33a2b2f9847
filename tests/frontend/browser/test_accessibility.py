"""Accessibility, permalinks and narrow layouts, checked on one hostile-ish session in Chromium.

One fixture uploads a session with every kind of message (prompt, reply, thinking, tool call and
result, a sub-agent, a compaction), output and code that scroll, more than one lazy page, a
300-character path in its files and
its attribution, a share link, and a second session whose commit shares a 7-character prefix (so the
commit permalink lists both). axe-core (bundled by axe-playwright-python, injected into the page: no
network) checks every page; the permalink and layout checks use the same session.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from sessionledger.core import attribution, attribution_record
from sessions_app.models import Session
from tests.client.transcript_builder import TranscriptBuilder
from tests.frontend.browser.conftest import axe_violations, log_in, screenshot
from tests.integrations.records import pull_request
from tests.uploads import commit_hash

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDE = {"width": 1400, "height": 900}
PHONE = {"width": 390, "height": 844}
AGENT = "a7f3c21"
DEEP = "src/" + "/".join(f"very-long-directory-name-{n:02d}" for n in range(10)) + "/"
LONG_PATH = (DEEP + "x" * 300)[:289] + "/handler.py"  # 300 characters, no space to break at
ABSOLUTE = "/home/dev/repo/" + LONG_PATH  # as the agent's tool calls name it
TURNS = 20  # 6 messages a turn: more than one page of 100 messages
LOG_LINES = [f"build step {n}: " + "=" * 240 for n in range(80)]
SIZES = {"1280": {"width": 1280, "height": 900}, "390": PHONE}


def _transcript() -> tuple[bytes, dict[str, bytes]]:
    b = TranscriptBuilder(start="2026-05-04T09:00:00Z", step_seconds=3)
    b.prompt("Fix the <b>handler</b> in `" + ABSOLUTE + "`")
    b.thinking("The handler lives deep in the tree; read it first.")
    b.assistant_text("Reading the **handler**.")
    b.new_response().tool_call("Read", {"file_path": ABSOLUTE}, result="def handle(): ...")
    b.new_response().task("Find callers", "List who calls handle()", agent_id=AGENT, result="Two callers.")
    b.new_response().tool_call(
        "Edit", {"file_path": ABSOLUTE, "old_string": "...", "new_string": "return 1"}, result="Updated."
    )
    b.new_response().tool_call("Bash", {"command": "pytest -q"}, result="1 failed", is_error=True)
    # blocks that scroll both ways: a keyboard must reach them
    b.new_response().tool_call("Bash", {"command": "cat build.log"}, result="\n".join(LOG_LINES))
    b.new_response().assistant_text("The widest line:\n\n```python\nx = 1  # " + "y" * 300 + "\n```")
    b.new_response().assistant_text("One test fails; fixing.").turn_end()
    b.compact("The user asked to fix the handler; one test failed.", trigger="auto")
    for turn in range(2, TURNS + 1):
        b.prompt(f"Turn {turn}: keep going with step_{turn}")
        b.thinking(f"Plan for turn {turn}.").assistant_text(f"Working on **step_{turn}**.")
        b.new_response().tool_call("Bash", {"command": f"pytest tests/test_{turn}.py"}, result="ok")
        b.new_response().assistant_text(f"Turn {turn} done.").turn_end()
    sub = b.subagent(AGENT)
    sub.user("List who calls handle()").tool_call("Grep", {"pattern": "handle("}, result="a.py\nb.py")
    sub.assistant_text("Checking the second caller.").assistant_text("Two callers.")
    return b.build(), {AGENT: sub.build()}


@dataclass
class Seeded:
    session: Session
    messages: list[dict]  # as the API returns them
    share: str  # /share/{token}
    commit: str  # /p/{project}/c/{prefix}: a prefix two sessions' commits share

    def url(self, rest: str = "") -> str:
        return f"/p/{self.session.project.slug}/s/{self.session.pk}{rest}"


@pytest.fixture
def seeded(world, make_session, api_as) -> Seeded:
    raw, agents = _transcript()
    sha, other = "a11ce55" + commit_hash("a11y")[7:], "a11ce55" + commit_hash("a11y-2")[7:]
    files = [LONG_PATH, "src/app.py"]
    session = make_session(
        world.project,
        world.member,
        raw,
        subagents=agents,
        seed="a11y",
        commit_hash=sha,
        files_touched=files,
        commit_message="Fix the handler\n\nA long path.",
    )
    make_session(world.project, world.member, raw[: raw.index(b"\n") + 1], seed="a11y-2", commit_hash=other)
    member = api_as(world.member)
    lines = {LONG_PATH: [attribution.Line.of(n, f"line {n}") for n in (1, 2, 3)]}
    record = attribution_record.build_record(
        revision=sha,
        added=lines,
        owners=attribution.attribute(lines, []),
        line_counts={LONG_PATH: 3},
        agent="claude-code",
        base_url="http://testserver",
        project=world.project.slug,
    )
    base = f"/api/v1/projects/{world.project.slug}/sessions/{session.pk}"
    stored = member.post(f"{base}/attribution", record, format="json")
    assert stored.status_code == 201, stored.content
    share = member.post(f"{base}/shares", {"days": 7}, format="json").json()["url"].split("/share/", 1)[1]
    messages = member.get(f"{base}/messages", {"limit": 1000}).json()["results"]
    pull_request(world.project, number=7, commits=[sha], dropped=(other,))
    return Seeded(session, messages, f"/share/{share}", f"/p/{world.project.slug}/c/{sha[:7]}")


OPEN_EVERY_FOLD = "() => document.querySelectorAll('details').forEach(fold => { fold.open = true; })"

# The page's own background and text, as relative luminances (WCAG): a dark page has a dark background.
COLOURS = """() => {
    const luminance = colour => {
        const [r, g, b] = colour.match(/[\\d.]+/g).slice(0, 3).map(v => {
            const c = v / 255;
            return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
        });
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const page = getComputedStyle(document.documentElement), body = getComputedStyle(document.body);
    return {background: luminance(page.backgroundColor), text: luminance(body.color)};
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", SIZES)
def test_every_page_has_no_axe_violations_with_every_fold_open(
    browser, live_server, world, seeded, size, scheme
) -> None:
    context = browser.new_context(base_url=live_server.url, viewport=SIZES[size], color_scheme=scheme)
    context.set_default_timeout(15_000)
    page = context.new_page()
    slug = world.project.slug
    failures = {}
    wrong_scheme = {}

    def check(name: str) -> None:
        page.evaluate(OPEN_EVERY_FOLD)  # every folded block open: its text is checked too
        failures[name] = axe_violations(page)
        colours = page.evaluate(COLOURS)
        dark = colours["background"] < 0.05 and colours["text"] > 0.5
        if dark != (scheme == "dark"):
            wrong_scheme[name] = colours

    page.goto("/accounts/login/")
    check("login")
    page.goto(seeded.share)
    check("share")
    log_in(page, world.admin.email)
    pages = {
        "dashboard": "/",
        "session list": f"/p/{slug}/",
        "session": seeded.url(),
        "whole conversation": seeded.url("/conversation"),
        "commit": seeded.commit,
        "pull request": f"/p/{slug}/pr/7",
        "files": seeded.url("/files"),
        "insights": f"/p/{slug}/insights",
        "audit": f"/p/{slug}/audit",
        "settings": f"/p/{slug}/settings/",
    }
    for name, path in pages.items():
        page.goto(path)
        if name in ("session", "whole conversation"):
            page.keyboard.press("x")  # the script's own "expand all" too
        check(name)
        if name == "session":
            screenshot(page, f"session-{size}-{scheme}", full_page=False)
    context.close()
    failures = {name: found for name, found in failures.items() if found}
    assert not failures, json.dumps(failures, indent=1)
    assert not wrong_scheme, wrong_scheme


def test_a_keyboard_scrolls_a_long_output_with_every_fold_open(browser, live_server, world, seeded) -> None:
    context = browser.new_context(base_url=live_server.url, viewport=SIZES["1280"])
    context.set_default_timeout(15_000)
    page = context.new_page()
    log_in(page, world.viewer.email)
    page.goto(seeded.url())
    page.keyboard.press("x")
    log = page.locator("pre", has_text="build step 1:").first  # long: scrolls down
    code = page.locator(".md pre", has_text="yyyy").first  # wide: scrolls sideways
    for block, key, scrolled in ((log, "End", "scrollTop"), (code, "ArrowRight", "scrollLeft")):
        assert block.evaluate(f"pre => pre.{scrolled} === 0")
        block.focus()  # only an element a keyboard can reach takes focus
        assert block.evaluate("pre => pre === document.activeElement"), key
        page.keyboard.press(key)
        # A key's scroll lands on a later frame than the key press when later pages are being appended.
        page.wait_for_function(f"pre => pre.{scrolled} > 0", arg=block.element_handle())
    context.close()


# Where a permalink must land, per kind of message: what picks it from the API's messages, and
# a text the reader must then see. The sub-agent's prompt and report are drawn by its Task call.
KINDS = {
    "prompt": ({"kind": "prompt"}, "Fix the <b>handler</b>"),
    "assistant text after thinking": ({"role": "assistant", "kind": "text"}, "Reading the handler."),
    "thinking": ({"kind": "thinking"}, "The handler lives deep in the tree"),
    "tool call": ({"kind": "tool_use", "sidechain": None, "n": 2}, "Edit"),
    "tool result": ({"kind": "tool_result", "sidechain": None, "n": 3}, "1 failed"),
    "sub-agent prompt": ({"sidechain": True, "kind": "text"}, "List who calls handle()"),
    "sub-agent message": ({"sidechain": True, "kind": "text", "n": 1}, "Checking the second caller."),
    "sub-agent tool call": ({"sidechain": True, "kind": "tool_use"}, "handle("),
    "sub-agent report": ({"sidechain": True, "kind": "text", "n": 2}, "Two callers."),
    "compaction summary": ({"kind": "summary"}, "The user asked to fix the handler"),
    "thinking on a later page": ({"kind": "thinking", "n": TURNS - 1}, f"Plan for turn {TURNS}."),
}


def _pick(messages: list[dict], want: dict) -> dict:
    want = dict(want)
    skip = want.pop("n", 0)
    return [m for m in messages if all(m.get(key) == value for key, value in want.items())][skip]


LANDED = """() => {
    const marked = [...document.querySelectorAll("#cards .is-target")];
    const target = marked[0];
    if (!target) { return null; }
    const closed = [];
    for (let node = target; node; node = node.parentElement) {
        if (node.tagName === "DETAILS" && !node.open) { closed.push(node.className); }
    }
    const box = target.getBoundingClientRect();
    const bottom = window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 2;
    return {marked: marked.length, closed, top: box.top, height: box.height, bottom};
}"""


def _assert_landed(page, expected: str, what: str) -> None:
    page.wait_for_function("() => document.querySelector('#cards .is-target')")
    landed = page.evaluate(LANDED)
    target = page.locator("#cards .is-target")
    assert landed["marked"] == 1 and not landed["closed"] and landed["height"] > 0, (what, landed)
    # scrolled to with a margin above it (unless the page ends before it can reach the top)
    assert 8 <= landed["top"] < page.viewport_size["height"] / 2 or landed["bottom"], (what, landed)
    assert target.get_by_text(expected, exact=False).first.is_visible(), what
    assert target.evaluate("t => t === document.activeElement"), what


def test_every_kind_of_message_permalink_opens_marks_and_scrolls_to_it(browser, live_server, world, seeded) -> None:
    context = browser.new_context(base_url=live_server.url, viewport=WIDE)
    context.set_default_timeout(15_000)
    page = context.new_page()
    log_in(page, world.viewer.email)
    slug = world.project.slug
    for what, (want, expected) in KINDS.items():
        message = _pick(seeded.messages, want)
        page.goto(f"/p/{slug}/m/{message['uuid']}")
        _assert_landed(page, expected, what)
        if "later page" in what:
            assert "page 2 of 2" in page.locator("#showing").inner_text()

    # on a page loaded lazily: the #m-{uuid} link of a message there lands without a reload
    page.goto(seeded.url())
    # the side column keeps to the screen, its details in view at 900 px, however long a path
    side = page.locator(".reader-side").bounding_box()
    details = page.locator(".details-panel").bounding_box()
    assert details["x"] + details["width"] <= side["x"] + side["width"] <= WIDE["width"]
    assert details["y"] + details["height"] <= WIDE["height"]
    screenshot(page, "session-side-column-1400", full_page=False)
    page.evaluate("window.stayed = true")
    last = _pick(seeded.messages, {"kind": "prompt", "n": TURNS - 1})
    # Later pages come on their own after the first paint, or as the reader scrolls to the link.
    page.evaluate(
        "() => { const more = document.querySelector('#more [data-more]'); if (more) more.scrollIntoView(); }"
    )
    page.locator(f"#m-{last['uuid']}").wait_for(state="attached")
    page.evaluate(f"location.hash = 'm-{last['uuid']}'")
    _assert_landed(page, f"Turn {TURNS}: keep going", "prompt on a lazily loaded page")
    assert page.evaluate("window.stayed === true")
    context.close()


TARGET = """() => {
    const target = document.querySelector(":target");
    if (!target) { return null; }
    const link = target.querySelector("a.plink");
    return {
        tag: target.tagName, id: target.id, text: target.innerText,
        marked: target === document.querySelector("#cards .is-target"),
        link: link && link.closest("[id^='m-']") === target ? {href: link.getAttribute("href"), id: link.id} : null,
    };
}"""


def test_a_permalink_targets_the_message_itself_not_its_link(browser, live_server, world, seeded) -> None:
    context = browser.new_context(base_url=live_server.url, viewport=WIDE)
    context.set_default_timeout(15_000)
    page = context.new_page()
    log_in(page, world.viewer.email)
    for what in ("prompt", "assistant text after thinking", "tool call", "tool result", "thinking on a later page"):
        want, expected = KINDS[what]
        uuid = _pick(seeded.messages, want)["uuid"]
        page.goto(f"/p/{world.project.slug}/m/{uuid}")
        page.wait_for_function("() => document.querySelector('#cards .is-target')")
        target = page.evaluate(TARGET)
        # :target (what CSS, focus and screen readers follow) is the message's own block, marked
        assert target and target["id"] == f"m-{uuid}" and target["tag"] != "A", (what, target)
        assert expected in target["text"] and target["marked"], (what, target)
        if target["link"]:  # its "#" link points at it and is no anchor of its own
            assert target["link"] == {"href": f"?at={uuid}#m-{uuid}", "id": ""}, (what, target)
    context.close()


NAME_IN_VIEW = """item => {
    const text = item.firstChild;
    const range = document.createRange();
    range.setStart(text, text.length - "handler.py".length);
    range.setEnd(text, text.length);
    const name = range.getBoundingClientRect(), box = item.getBoundingClientRect();
    return name.width > 0 && name.left >= box.left - 1 && name.right <= box.right + 1;
}"""

SMALLEST_CHART_TEXT = """() => Math.min(...[...document.querySelectorAll("svg.chart text")].map(text => {
    const svg = text.ownerSVGElement;
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    return parseFloat(getComputedStyle(text).fontSize) * scale;
}))"""


def test_a_300_character_path_never_widens_a_phone_page(browser, live_server, world, seeded) -> None:
    context = browser.new_context(base_url=live_server.url, viewport=PHONE, is_mobile=True, has_touch=True)
    context.set_default_timeout(15_000)
    page = context.new_page()
    log_in(page, world.viewer.email)
    wide = "document.documentElement.scrollWidth"
    failed = _pick(seeded.messages, KINDS["tool result"][0])
    page.goto(f"/p/{world.project.slug}/m/{failed['uuid']}")
    _assert_landed(page, "1 failed", "a tool result at 390 px")
    assert page.evaluate(wide) <= PHONE["width"]
    found = axe_violations(page)  # the phone layout (panels folded above the conversation) too
    assert not found, found

    # Files touched: the path is cut at its start, so the file name stays in view
    page.locator(".details-panel > summary").click()
    item = page.locator(f".file-list li[title='{LONG_PATH}']")
    assert item.evaluate("li => li.scrollWidth > li.clientWidth") and item.evaluate(NAME_IN_VIEW)
    assert page.evaluate(wide) <= PHONE["width"]

    page.goto(seeded.url("/files"))
    assert page.get_by_text("handler.py").first.is_visible() and page.evaluate(wide) <= PHONE["width"]
    page.goto(f"/p/{world.project.slug}/insights")
    smallest = page.evaluate(SMALLEST_CHART_TEXT)
    assert smallest >= 11 and page.evaluate(wide) <= PHONE["width"], smallest
    context.close()

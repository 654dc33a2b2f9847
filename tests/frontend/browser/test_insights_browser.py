"""The insights page in a real browser: charts drawn under the strict CSP, a period chosen, a screenshot."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from tests.factories import make_member
from tests.frontend.browser.conftest import log_in, screenshot
from tests.frontend.test_insights import MONDAY, at, seed_sessions, turns

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_viewer_reads_the_insights_and_narrows_them_to_a_branch(page, world, ingest) -> None:
    seed_sessions(world, ingest)
    erin = make_member(world.project, "member", email="erin.long-name@example.com")
    for week in range(3, 9):  # a few more weeks, so the page looks like a team's quarter
        for n, author in enumerate((world.admin, world.member, erin)[: 1 + week % 3]):
            raw = turns(1 + (week + n) % 6, errors=(week + n) % 2, tool=("Bash", "Edit", "Grep")[n])
            session = ingest(world.project, author, raw=raw, seed=f"more-{week}-{n}", feature_branch=f"feat/{n}")
            at(session, MONDAY + timedelta(weeks=week, days=n))
    csp_errors: list[str] = []
    page.on("console", lambda m: csp_errors.append(m.text) if "Content Security Policy" in m.text else None)

    log_in(page, world.viewer.email)
    page.goto(f"/p/{world.project.slug}/insights")
    for chart in ("sessions_per_author_week", "turns_per_commit", "task_outcomes", "tool_usage", "busiest_branches"):
        assert page.locator(f"svg.chart-{chart}").is_visible()
    assert page.locator("svg.chart-tool_usage text", has_text="Bash").count() == 1
    screenshot(page, "insights")

    page.locator("svg.chart-busiest_branches a", has_text="feat/x").click()
    page.wait_for_url(re.compile(r"branch=feat%2Fx"))
    assert page.locator("#i-branch").input_value() == "feat/x"
    assert page.locator(".tile-value").first.inner_text() == "3"
    assert csp_errors == [] and page.dialogs == []


# The author rows' labels (drawn right-aligned at the left of the grid) as the reader sees them:
# their text, and whether each lies inside the chart's frame and the window and is not covered.
AUTHOR_LABELS = """frame => {
    const box = frame.getBoundingClientRect();
    const labels = [...frame.querySelectorAll("text.label[text-anchor='end']:not(.muted)")];
    return {scrolled: frame.scrollLeft, labels: labels.map(label => {
        const r = label.getBoundingClientRect();
        const top = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
        return {
            text: label.lastChild.textContent,
            seen: r.width > 0 && r.left >= Math.max(box.left, 0) - 1 && r.right <= Math.min(box.right, innerWidth) + 1
                && top !== null && top.closest("text") === label,
        };
    })};
}"""


@pytest.mark.parametrize("width", [1280, 390])
def test_author_labels_stay_in_view_while_the_weeks_scroll(browser, live_server, world, ingest, width) -> None:
    seed_sessions(world, ingest)
    erin = make_member(world.project, "member", email="erin.long-name@example.com")
    # half a year of weeks: the grid is wider than the frame and opens at its latest week
    at(ingest(world.project, erin, raw=turns(2), seed="late"), MONDAY + timedelta(weeks=25))
    context = browser.new_context(base_url=live_server.url, viewport={"width": width, "height": 900})
    context.set_default_timeout(10_000)
    page = context.new_page()
    log_in(page, world.viewer.email)
    page.goto(f"/p/{world.project.slug}/insights")
    frame = page.locator(".chart-frame", has=page.locator("svg.chart-sessions_per_author_week"))
    frame.scroll_into_view_if_needed()
    seen = frame.evaluate(AUTHOR_LABELS)
    screenshot(page, f"insights-authors-{width}", full_page=False)
    context.close()
    assert seen["scrolled"] > 0, seen
    assert len(seen["labels"]) == 4, seen  # alice, mallory, dora, erin
    assert all(label["seen"] and len(label["text"]) > 3 for label in seen["labels"]), seen

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

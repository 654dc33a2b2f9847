"""Insights' "Merged pull requests": per merged PR in merge order, the agent's share of its added
lines (its commits' records summed) and its sessions' cost — on the page, in its CSV and the API."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

import pytest
from django.test import Client
from django_scopes import scopes_disabled

from integrations.models import PullRequest
from sessions_app.models import Session
from tests.integrations.records import pull_request
from tests.integrations.review_story import ELSEWHERE, review_story
from tests.uploads import commit_hash


@pytest.fixture
def merged(world, make_session, api_as) -> dict[str, Session]:
    made = review_story(world, make_session, api_as)  # PR #7: 9 of 12 lines by the agent
    pull_request(world.project, number=9, commits=[ELSEWHERE])  # 7 of 7
    pull_request(world.project, number=8, commits=[commit_hash("open")])  # still open: not counted
    with scopes_disabled():
        for number, day in ((7, 3), (9, 10)):
            merged_at = datetime(2026, 3, day, 12, tzinfo=UTC)
            PullRequest.objects.filter(number=number).update(merged=True, state="merged", merged_at=merged_at)
        # A comment written after both merges moves #7's updated_at past #9's: the order must not follow it.
        PullRequest.objects.filter(number=7).update(updated_at=datetime(2026, 3, 20, tzinfo=UTC))
    return made


def test_each_merged_pr_has_its_ai_share_and_cost_in_merge_order(world, merged, api_as) -> None:
    data = api_as(world.viewer).get("/api/v1/projects/acme-api/insights").json()
    rows = data["merged_pull_requests"]
    assert [(r["merged"], r["number"], r["added_lines"], r["ai_lines"], r["ai_share"]) for r in rows] == [
        ("2026-03-03", 7, 12, 9, 0.75),
        ("2026-03-10", 9, 7, 7, 1.0),
    ]
    assert rows[0]["sessions"] == 3 and rows[0]["cost_usd"] > 0  # its dropped commit's session cost too
    since = api_as(world.viewer).get("/api/v1/projects/acme-api/insights", {"since": "2026-03-05T00:00:00Z"})
    assert [r["number"] for r in since.json()["merged_pull_requests"]] == [9]


def test_the_insights_page_draws_the_merged_prs_and_exports_them(world, merged) -> None:
    client = Client()
    client.force_login(world.viewer)

    page = client.get("/p/acme-api/insights").content.decode()

    card = page[page.index('<svg class="chart chart-merged_pull_requests"') :].split("</svg>")[0]
    assert "Mar 3 #7 Retry the upload on 503" in card and "75% of 12 lines · $" in card
    assert 'href="/p/acme-api/pr/9"' in card and "100% of 7 lines" in card
    exported = client.get("/p/acme-api/insights.csv", {"chart": "merged_pull_requests"})
    assert exported.status_code == 200
    table = list(csv.DictReader(io.StringIO(exported.content.decode())))
    assert [(r["number"], r["ai_lines"], r["added_lines"]) for r in table] == [("7", "9", "12"), ("9", "7", "7")]

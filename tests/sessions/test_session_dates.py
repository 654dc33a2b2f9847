"""A session's date is when its conversation happened (``captured_at``), not its upload time.

Sessions captured from September to February and uploaded today (``import``, an offline queue)
must sort, filter, fall into timeline order and insights weeks by when they happened.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone
from django_scopes import scopes_disabled

from projects.scoping import project_scope
from sessions_app import insights
from sessions_app.context import context_digest
from sessions_app.models import Session

SEPTEMBER = datetime(2025, 9, 15, 9, tzinfo=UTC)  # a Monday
JANUARY = datetime(2026, 1, 14, 16, 30, tzinfo=UTC)  # a Wednesday
FEBRUARY = datetime(2026, 2, 10, 21, 5, tzinfo=UTC)  # a Tuesday


@pytest.fixture
def captured(world, ingest) -> dict[str, Session]:
    """Uploaded today in an order unlike the order they happened in."""
    made = {}
    for name, when in (("february", FEBRUARY), ("september", SEPTEMBER), ("january", JANUARY)):
        made[name] = ingest(
            world.project,
            world.member,
            f"work of {name}",
            seed=name,
            feature_branch="feat/dates",
            captured_at=when.isoformat(),
        )
    return made


def _ids(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]]


def test_the_api_lists_newest_captured_first_and_filters_by_it(world, api_as, captured) -> None:
    client, url = api_as(world.viewer), f"/api/v1/projects/{world.project.slug}/sessions"
    order = [str(captured[n].pk) for n in ("february", "january", "september")]
    assert _ids(client.get(url)) == order
    assert _ids(client.get(url, {"since": "2026-01-01T00:00:00Z", "until": "2026-02-12T23:59:59Z"})) == order[:2]
    assert _ids(client.get(url, {"until": "2025-12-31T00:00:00Z"})) == order[2:]
    pages, next_url = [], f"{url}?limit=1"
    while next_url:
        page = client.get(next_url).json()
        pages += [row["id"] for row in page["results"]]
        next_url = page["next"]
    assert pages == order
    row = client.get(url, {"limit": 1}).json()["results"][0]
    assert (
        row["captured_at"].startswith("2026-02-10T21:05")
        and row["created_at"][:10] == timezone.now().date().isoformat()
    )


def test_the_list_page_filters_by_capture_date_and_notes_the_upload(client, world, captured) -> None:
    client.force_login(world.viewer)
    response = client.get(f"/p/{world.project.slug}/", {"since": "2026-01-01", "until": "2026-02-12"})
    assert [s.pk for s in response.context["page"].items] == [captured["february"].pk, captured["january"].pk]
    page = response.content.decode()
    assert 'datetime="2026-02-10T21:05:00' in page and "Feb 10, 21:05" in page
    assert "uploaded" in page  # the upload date is noted where it differs


def test_the_branch_timeline_and_the_context_digest_follow_capture_order(client, world, captured) -> None:
    client.force_login(world.viewer)
    timeline = client.get(f"/p/{world.project.slug}/b/feat/dates").content.decode()
    positions = [timeline.index(f"work of {name}") for name in ("september", "january", "february")]
    assert positions == sorted(positions)
    with project_scope(world.project):
        digest = context_digest(project=world.project, branch="feat/dates")
    assert [c.session.pk for c in digest.included] == [captured[n].pk for n in ("february", "january", "september")]
    assert "2026-02-10" in digest.text and "2025-09-15" in digest.text


def test_insights_weeks_are_capture_weeks(world, captured) -> None:
    with project_scope(world.project):
        rows = insights.per_author_week(world.project, insights.Period())
        january = insights.per_author_week(
            world.project,
            insights.Period(since=datetime(2026, 1, 1, tzinfo=UTC), until=datetime(2026, 1, 31, tzinfo=UTC)),
        )
    assert [row["week"] for row in rows] == ["2025-09-15", "2026-01-12", "2026-02-09"]
    assert [(row["week"], row["sessions"]) for row in january] == [("2026-01-12", 1)]


def test_without_a_capture_date_or_with_one_in_the_future_the_upload_dates_it(world, ingest) -> None:
    before = timezone.now()
    missing = ingest(world.project, world.member, "no date", seed="none")
    ahead = ingest(world.project, world.member, "clock ahead", seed="ahead", captured_at="2099-01-01T00:00:00Z")
    with scopes_disabled():
        for session in Session.objects.filter(pk__in=[missing.pk, ahead.pk]):
            assert before <= session.captured_at <= session.created_at + timedelta(seconds=1)
            assert not session.uploaded_later

"""The daily insights totals the database keeps agree with counting sessions one by one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django_scopes import scopes_disabled

from projects.scoping import project_scope
from sessions_app import insights
from sessions_app.models import Session
from sessions_app.retention import session_delete
from tests.sessions.test_insights_audit_retention import MONDAY, _at, _fixture, _turns


class CountedOneByOne(insights.Period):
    """A period whose every session is read from the session rows (no daily totals)."""

    def whole_days(self):
        return None


PERIODS = [
    {},
    {"since": MONDAY.replace(hour=0)},
    {"since": MONDAY + timedelta(hours=1), "until": MONDAY + timedelta(days=9, hours=-1)},
    {"until": datetime(2026, 3, 8, tzinfo=UTC)},  # midnight, inclusive: one instant of the 8th
    {"since": MONDAY, "until": MONDAY + timedelta(hours=2)},  # within one day
    {"since": MONDAY + timedelta(days=20), "until": MONDAY},  # backwards: nothing
    {"branch": "feat/x"},
    {"branch": "feat/x", "since": MONDAY + timedelta(days=1, hours=5)},
    {"until": datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)},  # the end of the calendar
]


def _both(project, **period):
    with project_scope(project):
        return insights.insights(project=project, period=insights.Period(**period)), insights.insights(
            project=project, period=CountedOneByOne(**period)
        )


@pytest.mark.parametrize("period", PERIODS, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()) or "all")
def test_totals_agree_with_the_sessions_for_any_period(world, ingest, period) -> None:
    _fixture(world, ingest)
    from_totals, one_by_one = _both(world.project, **period)
    assert from_totals == one_by_one


def test_a_whole_day_period_reads_only_the_totals(world, ingest) -> None:
    period = insights.Period(since=MONDAY.replace(hour=0), until=datetime(2026, 3, 15, 23, 59, 59, 999999, tzinfo=UTC))
    assert period.whole_days() is not None
    assert insights._edges(period, period.whole_days()) is None


def test_deleting_moving_and_failing_sessions_keep_the_totals_right(world, ingest) -> None:
    _fixture(world, ingest)
    with scopes_disabled():
        first, second = Session.objects.filter(project=world.project).order_by("captured_at")[:2]
    with project_scope(world.project):
        session_delete(session=first, by="test")
    _at(second, MONDAY + timedelta(days=30))
    failed = ingest(world.project, world.member, raw=_turns(4), seed="failed")
    with scopes_disabled():
        Session.objects.filter(pk=failed.pk).update(status="failed")
    from_totals, one_by_one = _both(world.project)
    assert from_totals == one_by_one
    assert from_totals["size"]["sessions"] == 4
    assert from_totals["sessions_per_author_week"][-1]["week"] == "2026-03-30"


def test_emptied_days_leave_no_rows_behind(world, ingest) -> None:
    session = ingest(world.project, world.member, raw=_turns(2), seed="lonely")
    with project_scope(world.project):
        session_delete(session=session, by="test")
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM sessions_app_insightsday WHERE project_id = %s", [world.project.pk])
        assert cursor.fetchone()[0] == 0


def test_another_projects_totals_stay_out_of_reach(world, ingest) -> None:
    ingest(world.other_project, world.other_admin, raw=_turns(3), seed="theirs")
    with project_scope(world.project), connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM sessions_app_insightsday")  # no WHERE: row-level security filters
        assert cursor.fetchone()[0] == 0


def _percentile_cont(project, since=None) -> dict:
    """The reference: count and medians as PostgreSQL's percentile_cont computes them over all rows."""
    sql = """SELECT count(*), percentile_cont(0.5) WITHIN GROUP (ORDER BY raw_size_bytes),
                    percentile_cont(0.5) WITHIN GROUP (ORDER BY size_bytes)
             FROM sessions_app_session WHERE project_id = %s AND status NOT IN ('processing', 'failed')
             AND captured_at >= COALESCE(%s, '-infinity'::timestamptz)"""
    with connection.cursor() as cursor:
        cursor.execute(sql, [project.pk, since])
        count, raw, stored = cursor.fetchone()
    return {"sessions": count, "median_raw_bytes": int(raw or 0), "median_stored_bytes": int(stored or 0)}


@pytest.mark.parametrize("extra", [0, 1], ids=["odd", "even"])
def test_median_sizes_equal_percentile_cont(world, ingest, extra) -> None:
    _fixture(world, ingest)
    for n in range(extra):
        ingest(world.project, world.member, raw=_turns(7), seed=f"extra-{n}")
    since = MONDAY + timedelta(days=1, hours=2)
    with project_scope(world.project):
        assert insights.size_summary(world.project, insights.Period())["sessions"] == 5 + extra
        assert insights.size_summary(world.project, insights.Period()) == _percentile_cont(world.project)
        assert insights.size_summary(world.project, insights.Period(since=since)) == _percentile_cont(
            world.project, since
        )

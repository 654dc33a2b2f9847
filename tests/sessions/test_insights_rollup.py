"""The daily insights totals the database keeps agree with counting sessions one by one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django_scopes import scopes_disabled

from projects.scoping import project_scope
from sessions_app import insights
from sessions_app.models import Session
from sessions_app.services import session_delete
from tests.seeding import seed_sessions
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


RECOUNT = """
    SELECT s.project_id, br.branch, f.facet, (s.captured_at AT TIME ZONE 'UTC')::date, f.key,
           sum(f.sessions), sum(f.a), sum(f.b)
    FROM sessions_app_session AS s, sessions_app_insight_facts(s) AS f,
         LATERAL (SELECT DISTINCT unnest(ARRAY['', s.feature_branch]) AS branch) AS br
    WHERE s.status NOT IN ('processing', 'failed') AND s.project_id = %s
    GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5"""
TOTALS = """SELECT project_id, branch, facet, day, key, sessions, a, b FROM sessions_app_insightsday
    WHERE project_id = %s ORDER BY 1, 2, 3, 4, 5"""


def _rollup_matches_a_recount(project) -> int:
    with connection.cursor() as cursor:
        cursor.execute(TOTALS, [project.pk])
        totals = cursor.fetchall()
        cursor.execute(RECOUNT, [project.pk])
        assert totals == cursor.fetchall()
    return len(totals)


def test_multi_row_insert_update_and_delete_keep_the_totals_right(world) -> None:
    """The trigger works per statement: every statement below touches hundreds of sessions at once."""
    statements = [
        "UPDATE sessions_app_session SET status = 'failed' WHERE title LIKE 'Session 1%%'",
        "UPDATE sessions_app_session SET captured_at = captured_at - interval '3 days', feature_branch = 'main' "
        "WHERE turn_count > 10",
        "UPDATE sessions_app_session SET turn_count = turn_count + 1, digest = digest - 'tool_counts' "
        "WHERE turn_count = 5",
        "UPDATE sessions_app_session SET processing_attempts = 1",  # no counted fact changes
        "UPDATE sessions_app_session SET status = 'complete' WHERE status = 'failed' AND turn_count < 8",
        "DELETE FROM sessions_app_session WHERE turn_count < 4",
        "DELETE FROM sessions_app_session WHERE feature_branch = 'main'",
    ]
    with connection.cursor() as cursor:
        seed_sessions(
            cursor, project_id=world.project.pk, author_ids=[world.member.pk, world.admin.pk], start=1, stop=800
        )
        seed_sessions(cursor, project_id=world.other_project.pk, author_ids=[world.other_admin.pk], start=1, stop=50)
    assert _rollup_matches_a_recount(world.project) > 100
    for sql in statements:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            assert cursor.rowcount > 0, sql
        _rollup_matches_a_recount(world.project)
        _rollup_matches_a_recount(world.other_project)
    from_totals, one_by_one = _both(world.project)
    assert from_totals == one_by_one and from_totals["size"]["sessions"] > 0
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM sessions_app_session WHERE project_id = %s", [world.project.pk])
        cursor.execute("SELECT count(*) FROM sessions_app_insightsday WHERE project_id = %s", [world.project.pk])
        assert cursor.fetchone()[0] == 0

"""Retrospective numbers for a project (SPEC §5 Insights), as a handful of aggregate queries.

Per-session facts (turns, messages, tool calls and errors, size) were precomputed by the worker,
so nothing here reads a blob. The page, the CSV export and the API all come from ``insights``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import Count, Q, QuerySet, Sum
from django.db.models.functions import TruncWeek

from projects.models import Project
from sessions_app.models import Kind, Session, Status

TURN_BUCKETS = ((1, 1, "1"), (2, 3, "2–3"), (4, 7, "4–7"), (8, 15, "8–15"), (16, None, "16+"))
TOP_TOOLS, TOP_BRANCHES = 15, 10


@dataclass(frozen=True)
class Period:
    since: datetime | None = None
    until: datetime | None = None
    branch: str = ""


def _sessions(project: Project, period: Period) -> QuerySet[Session]:
    sessions = Session.objects.filter(project=project).exclude(status__in=[Status.PROCESSING, Status.FAILED])
    if period.since:
        sessions = sessions.filter(created_at__gte=period.since)
    if period.until:
        sessions = sessions.filter(created_at__lte=period.until)
    if period.branch:
        sessions = sessions.filter(feature_branch=period.branch)
    return sessions


def per_author_week(sessions: QuerySet[Session]) -> list[dict[str, Any]]:
    rows = (
        sessions.annotate(week=TruncWeek("created_at"))
        .values("week", "author__email")
        .annotate(sessions=Count("id"), turns=Sum("turn_count"))
        .order_by("week", "author__email")
    )
    return [
        {
            "week": r["week"].date().isoformat(),
            "author": r["author__email"] or "unknown",
            "sessions": r["sessions"],
            "turns": r["turns"] or 0,
        }
        for r in rows
    ]


def turns_per_commit(sessions: QuerySet[Session]) -> list[dict[str, Any]]:
    commits = sessions.filter(kind=Kind.CHECKPOINT)
    buckets = {label: Count("id", filter=_bucket(low, high)) for low, high, label in TURN_BUCKETS}
    counts = commits.aggregate(**buckets)
    messages = commits.aggregate(
        **{label: Sum("message_count", filter=_bucket(low, high)) for low, high, label in TURN_BUCKETS}
    )
    return [
        {"turns": label, "commits": counts[label], "messages": messages[label] or 0} for _, _, label in TURN_BUCKETS
    ]


def _bucket(low: int, high: int | None) -> Q:
    return Q(turn_count__gte=low) & (Q(turn_count__lte=high) if high is not None else Q())


def tool_usage(sessions: QuerySet[Session]) -> list[dict[str, Any]]:
    inner_sql, params = sessions.values("digest").query.sql_with_params()
    sql = f"""
        SELECT tool.key, SUM((tool.value->>'calls')::int), SUM(COALESCE((tool.value->>'errors')::int, 0))
        FROM ({inner_sql}) AS s, jsonb_each(s.digest->'tool_counts') AS tool
        GROUP BY tool.key ORDER BY 2 DESC, 1 LIMIT {TOP_TOOLS}"""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [
        {"tool": name, "calls": calls, "errors": errors, "error_rate": round(errors / calls, 4) if calls else 0}
        for name, calls, errors in rows
    ]


def task_outcomes(sessions: QuerySet[Session]) -> list[dict[str, Any]]:
    counts = dict(sessions.filter(kind=Kind.TASK).values_list("status").annotate(n=Count("id")))
    total = sum(counts.values())
    return [
        {"status": s, "sessions": counts.get(s, 0), "rate": round(counts.get(s, 0) / total, 4) if total else 0}
        for s in (Status.COMPLETE, Status.REJECTED, Status.ABANDONED)
    ]


def busiest_branches(sessions: QuerySet[Session]) -> list[dict[str, Any]]:
    rows = (
        sessions.exclude(feature_branch="")
        .values("feature_branch")
        .annotate(sessions=Count("id"), turns=Sum("turn_count"))
        .order_by("-sessions", "feature_branch")
    )
    return [
        {"branch": r["feature_branch"], "sessions": r["sessions"], "turns": r["turns"] or 0}
        for r in rows[:TOP_BRANCHES]
    ]


def size_summary(sessions: QuerySet[Session]) -> dict[str, Any]:
    inner_sql, params = sessions.values("raw_size_bytes", "size_bytes").query.sql_with_params()
    sql = f"""SELECT count(*), percentile_cont(0.5) WITHIN GROUP (ORDER BY raw_size_bytes),
                     percentile_cont(0.5) WITHIN GROUP (ORDER BY size_bytes) FROM ({inner_sql}) AS s"""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        count, raw_median, stored_median = cursor.fetchone()
    return {"sessions": count, "median_raw_bytes": int(raw_median or 0), "median_stored_bytes": int(stored_median or 0)}


CHARTS = {
    "sessions_per_author_week": per_author_week,
    "turns_per_commit": turns_per_commit,
    "tool_usage": tool_usage,
    "task_outcomes": task_outcomes,
    "busiest_branches": busiest_branches,
}


def insights(*, project: Project, period: Period) -> dict[str, Any]:
    sessions = _sessions(project, period)
    return {"size": size_summary(sessions), **{name: chart(sessions) for name, chart in CHARTS.items()}}


def chart(*, project: Project, period: Period, name: str) -> list[dict[str, Any]]:
    return CHARTS[name](_sessions(project, period))

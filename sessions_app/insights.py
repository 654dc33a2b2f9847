"""Retrospective numbers for a project (docs/design.md §5 Insights), as a handful of aggregate queries.

Per-session facts (turns, messages, tool calls and errors) are summed by the database into daily
totals per facet and day of ``captured_at`` (``InsightsDay``, kept by statement-level triggers,
migration 0012). A chart adds up the whole days of the period from there and takes the rest — a
partial first or last day — from the sessions themselves through the same SQL function the triggers
use, so the numbers agree and a chart costs about the same at a thousand sessions or a million. Only
the median sizes walk an index of the project's sessions (to its middle, no sort); nothing reads a
blob or a digest.
The page, the CSV export and the API all come from ``insights`` and ``chart``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection

from projects.models import Project
from sessions_app import prices
from sessions_app.models import Status

# 0: a commit whose segment holds no human prompt (an agent working on alone from an earlier one)
TURN_BUCKETS = ((0, 0, "0"), (1, 1, "1"), (2, 3, "2–3"), (4, 7, "4–7"), (8, 15, "8–15"), (16, None, "16+"))
TOP_TOOLS, TOP_BRANCHES = 15, 10
DAY, INSTANT = timedelta(days=1), timedelta(microseconds=1)


@dataclass(frozen=True)
class Period:
    since: datetime | None = None
    until: datetime | None = None  # inclusive
    branch: str = ""

    def whole_days(self) -> tuple[date | None, date | None] | None:
        """(first, last) UTC day lying wholly inside the period, None for an open end; None if no day does."""
        try:
            first = _day_after(self.since - INSTANT) if self.since else None
            last = _day_before(self.until + INSTANT) if self.until else None
        except OverflowError:  # a bound at the end of the calendar: count the sessions one by one
            return None
        if first and last and first > last:
            return None
        return first, last


def _day_after(moment: datetime) -> date:
    return moment.astimezone(UTC).date() + DAY


def _day_before(moment: datetime) -> date:
    return moment.astimezone(UTC).date() - DAY


def _start(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def _counted(project: Project, period: Period) -> tuple[list[str], list[Any]]:
    """WHERE terms for the period's counted sessions (final and not failed), as ``s``."""
    terms, params = ["s.project_id = %s", "s.status NOT IN (%s, %s)"], [project.pk, Status.PROCESSING, Status.FAILED]
    if period.branch:
        terms.append("s.feature_branch = %s")
        params.append(period.branch)
    return terms, params


def _edges(period: Period, days: tuple[date | None, date | None] | None) -> tuple[str, list[Any]] | None:
    """The part of the period outside its whole days, as a WHERE term on ``s.captured_at``; None if empty."""
    if days is None:
        terms = [("s.captured_at >= %s", period.since), ("s.captured_at <= %s", period.until)]
        present = [(sql, value) for sql, value in terms if value is not None]
        return " AND ".join(sql for sql, _ in present) or "TRUE", [value for _, value in present]
    first, last = days
    ranges, params = [], []
    if first and period.since and period.since < _start(first):
        ranges.append("(s.captured_at >= %s AND s.captured_at < %s)")
        params += [period.since, _start(first)]
    if last and period.until and period.until >= _start(last + DAY):
        ranges.append("(s.captured_at >= %s AND s.captured_at <= %s)")
        params += [_start(last + DAY), period.until]
    return (f"({' OR '.join(ranges)})", params) if ranges else None


def _facts(
    project: Project, period: Period, facet: str | tuple[str, ...], *, by_branch: bool = False
) -> tuple[str, list[Any]]:
    """SQL of ``(day, key, sessions, a, b, facet, branch)`` rows of one facet (or several) over the
    period (see ``InsightsDay``). ``by_branch``: per named branch instead of the period's branch."""
    facets = [facet] if isinstance(facet, str) else list(facet)
    parts: list[str] = []
    params: list[Any] = []
    days = period.whole_days()
    if days is not None:
        sql = "SELECT day, key, sessions, a, b, facet, branch FROM sessions_app_insightsday WHERE project_id = %s"
        params.append(project.pk)
        if by_branch and not period.branch:
            sql += " AND branch <> ''"
        else:
            sql += " AND branch = %s"
            params.append(period.branch)
        for term, bound in (("day >= %s", days[0]), ("day <= %s", days[1])):
            if bound is not None:
                sql += f" AND {term}"
                params.append(bound)
        parts.append(f"{sql} AND facet = ANY(%s)")
        params.append(facets)
    edges = _edges(period, days)
    if edges is not None:
        terms, counted = _counted(project, period)
        if by_branch:
            terms.append("s.feature_branch <> ''")
        parts.append(
            "SELECT (s.captured_at AT TIME ZONE 'UTC')::date AS day, f.key, f.sessions, f.a, f.b, f.facet, "
            "s.feature_branch AS branch FROM sessions_app_session AS s, sessions_app_insight_facts(s) AS f "
            f"WHERE {' AND '.join(terms)} AND {edges[0]} AND f.facet = ANY(%s)"
        )
        params += [*counted, *edges[1], facets]
    return " UNION ALL ".join(parts), params


def _fetch(sql: str, params: list[Any]) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def per_author_week(project: Project, period: Period) -> list[dict[str, Any]]:
    facts, params = _facts(project, period, "author")
    users = get_user_model()._meta.db_table
    rows = _fetch(
        f"""SELECT date_trunc('week', f.day::timestamp)::date, u.email, sum(f.sessions), sum(f.a)::bigint
            FROM ({facts}) AS f LEFT JOIN {users} AS u ON u.id = NULLIF(f.key, '')::bigint
            GROUP BY 1, 2 HAVING sum(f.sessions) > 0 ORDER BY 1, 2""",
        params,
    )
    return [
        {"week": week.isoformat(), "author": email or "unknown", "sessions": sessions, "turns": turns}
        for week, email, sessions, turns in rows
    ]


def turns_per_commit(project: Project, period: Period) -> list[dict[str, Any]]:
    facts, params = _facts(project, period, "commit")
    rows = _fetch(f"SELECT f.key::int, sum(f.sessions), sum(f.a)::bigint FROM ({facts}) AS f GROUP BY 1", params)
    buckets = {label: {"turns": label, "commits": 0, "messages": 0} for _, _, label in TURN_BUCKETS}
    for turns, commits, messages in rows:
        label = _bucket(turns)
        if label:
            buckets[label]["commits"] += commits
            buckets[label]["messages"] += messages
    return list(buckets.values())


def _bucket(turns: int) -> str | None:
    return next((label for low, high, label in TURN_BUCKETS if low <= turns and (high is None or turns <= high)), None)


def tool_usage(project: Project, period: Period) -> list[dict[str, Any]]:
    facts, params = _facts(project, period, "tool")
    rows = _fetch(
        f"""SELECT f.key, sum(f.a)::bigint, sum(f.b)::bigint FROM ({facts}) AS f
            GROUP BY 1 HAVING sum(f.sessions) > 0 ORDER BY 2 DESC, 1 LIMIT {TOP_TOOLS}""",
        params,
    )
    return [
        {"tool": name, "calls": calls, "errors": errors, "error_rate": round(errors / calls, 4) if calls else 0}
        for name, calls, errors in rows
    ]


def task_outcomes(project: Project, period: Period) -> list[dict[str, Any]]:
    facts, params = _facts(project, period, "task")
    counts = dict(_fetch(f"SELECT f.key, sum(f.sessions) FROM ({facts}) AS f GROUP BY 1", params))
    total = sum(counts.values())
    return [
        {"status": s, "sessions": counts.get(s, 0), "rate": round(counts.get(s, 0) / total, 4) if total else 0}
        for s in (Status.COMPLETE, Status.REJECTED, Status.ABANDONED)
    ]


def busiest_branches(project: Project, period: Period) -> list[dict[str, Any]]:
    facts, params = _facts(project, period, "branch")
    rows = _fetch(
        f"""SELECT f.key, sum(f.sessions), sum(f.a)::bigint FROM ({facts}) AS f
            GROUP BY 1 HAVING sum(f.sessions) > 0 ORDER BY 2 DESC, 1 LIMIT {TOP_BRANCHES}""",
        params,
    )
    return [{"branch": branch, "sessions": sessions, "turns": turns} for branch, sessions, turns in rows]


def size_summary(project: Project, period: Period) -> dict[str, Any]:
    """Count and exact median sizes (``percentile_cont(0.5)``) in one statement, without sorting.

    The count comes from the daily totals; each median is the middle one or two values of a walk
    along the ``session_raw_size``/``session_stored_size`` index — half a project's entries at
    most, where a sort would order all of them. One statement, so one snapshot for all three.
    """
    facts, facts_params = _facts(project, period, "author")
    terms, params = _counted(project, period)
    for term, bound in (("s.captured_at >= %s", period.since), ("s.captured_at <= %s", period.until)):
        if bound is not None:
            terms.append(term)
            params.append(bound)
    where, middle = " AND ".join(terms), "ORDER BY 1 OFFSET (SELECT GREATEST((total - 1) / 2, 0) FROM n) LIMIT 2"
    sql = f"""WITH n AS (SELECT COALESCE(sum(f.sessions), 0) AS total FROM ({facts}) AS f)
        SELECT (SELECT total FROM n),
            ARRAY(SELECT s.raw_size_bytes FROM sessions_app_session AS s WHERE {where} {middle}),
            ARRAY(SELECT s.size_bytes FROM sessions_app_session AS s WHERE {where} {middle})"""
    [(count, raw, stored)] = _fetch(sql, [*facts_params, *params, *params])
    return {"sessions": count, "median_raw_bytes": _median(raw, count), "median_stored_bytes": _median(stored, count)}


def _median(middle: list[int], count: int) -> int:
    """``percentile_cont(0.5)`` from the middle value(s), interpolated in floating point as PostgreSQL does."""
    if not middle:
        return 0
    if count % 2 or len(middle) == 1:
        return int(middle[0])
    low, high = float(middle[0]), float(middle[1])
    return int(low + (high - low) * 0.5)


EFFORT_FACETS = ("tok", "cache", "effort", "steps")
MODEL_OF_KEY = "substr(f.key, length(split_part(f.key, '|', 1)) + 2)"  # 'tok'/'cache' keys are "author|model"


def effort_per_author_week(project: Project, period: Period) -> list[dict[str, Any]]:
    """Tokens, estimated cost, active and tool time, steps per commit — per author and week."""
    facts, params = _facts(project, period, EFFORT_FACETS)
    users = get_user_model()._meta.db_table
    rows = _fetch(
        f"""SELECT date_trunc('week', f.day::timestamp)::date, f.facet, u.email, {MODEL_OF_KEY},
                   sum(f.sessions), sum(f.a)::bigint, sum(f.b)::bigint
            FROM ({facts}) AS f LEFT JOIN {users} AS u ON u.id = NULLIF(split_part(f.key, '|', 1), '')::bigint
            GROUP BY 1, 2, 3, 4""",
        params,
    )
    return _effort_rows(rows, lambda row: (row[0].isoformat(), row[2] or "unknown"), ("week", "author"))


def effort_per_branch(project: Project, period: Period) -> list[dict[str, Any]]:
    """The same totals per named branch over the period, most expensive first."""
    facts, params = _facts(project, period, EFFORT_FACETS, by_branch=True)
    rows = _fetch(
        f"""SELECT f.branch, f.facet, split_part(f.key, '|', 1), {MODEL_OF_KEY},
                   sum(f.sessions), sum(f.a)::bigint, sum(f.b)::bigint
            FROM ({facts}) AS f GROUP BY 1, 2, 3, 4""",
        params,
    )
    result = _effort_rows(rows, lambda row: (row[0],), ("branch",))
    return sorted(result, key=lambda r: (-r["cost_usd"], -r["active_minutes"], r["branch"]))[:TOP_BRANCHES]


def _effort_rows(rows: list[tuple], group: Callable[[tuple], tuple], names: tuple[str, ...]) -> list[dict[str, Any]]:
    totals: dict[tuple, dict[str, Any]] = {}
    for row in rows:
        facet, model, sessions, a, b = row[1], row[3], row[4], row[5], row[6]
        key = group(row)
        t = totals.setdefault(key, {**dict(zip(names, key, strict=True)), **dict.fromkeys(EFFORT_COLUMNS, 0)})
        if facet == "tok":
            t["input_tokens"] += a
            t["output_tokens"] += b
            t["cost_usd"] += prices.cost(model, input_tokens=a, output_tokens=b)
        elif facet == "cache":
            t["cache_write_tokens"] += a
            t["cache_read_tokens"] += b
            t["cost_usd"] += prices.cost(model, cache_write_tokens=a, cache_read_tokens=b)
        if facet in ("tok", "cache") and prices.price_for(model) is None:
            t["unpriced_tokens"] += a + b  # a model the price table does not know: no cost, said so
        elif facet == "effort":
            t["sessions"] += sessions
            t["active_minutes"] += a
            t["tool_minutes"] += b
        elif facet == "steps":
            t["steps"] += a
            t["commits"] += b
    out = []
    for key in sorted(totals):
        t = totals[key]
        t["active_minutes"] = round(t["active_minutes"] / 60_000)
        t["tool_minutes"] = round(t["tool_minutes"] / 60_000)
        t["cost_usd"] = round(t["cost_usd"], 2)
        t["steps_per_commit"] = round(t["steps"] / t["commits"], 1) if t["commits"] else 0.0  # 0: no commit
        out.append(t)
    return out


EFFORT_COLUMNS = (
    "sessions",
    "active_minutes",
    "tool_minutes",
    "input_tokens",
    "output_tokens",
    "cache_write_tokens",
    "cache_read_tokens",
    "cost_usd",
    "unpriced_tokens",
    "steps",
    "commits",
)


CHARTS: dict[str, Callable[[Project, Period], list[dict[str, Any]]]] = {
    "sessions_per_author_week": per_author_week,
    "turns_per_commit": turns_per_commit,
    "tool_usage": tool_usage,
    "task_outcomes": task_outcomes,
    "busiest_branches": busiest_branches,
    "effort_per_author_week": effort_per_author_week,
    "effort_per_branch": effort_per_branch,
}


def _ai_share(project: Project, period: Period) -> list[dict[str, Any]]:
    from sessions_app.attribution.insights import ai_share_per_author_week

    return ai_share_per_author_week(project, period)


CHARTS["ai_share_per_author_week"] = _ai_share


def insights(*, project: Project, period: Period) -> dict[str, Any]:
    return {"size": size_summary(project, period), **{name: chart(project, period) for name, chart in CHARTS.items()}}


def chart(*, project: Project, period: Period, name: str) -> list[dict[str, Any]]:
    return CHARTS[name](project, period)

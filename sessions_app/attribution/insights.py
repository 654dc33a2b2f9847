"""The share of added lines the agent wrote, per author and week (a lead's retrospective number).

Counted from the stored attribution records' line totals (``Attribution.added_lines`` and
``ai_lines``), so one aggregate query whatever the number of sessions; commits without a
record (captured before attribution, or refused) are not counted, nor is a commit another
session's commit amended (``Session.amends``): the amending commit's record holds its lines, so
counting both would count them twice. Weeks are the sessions' upload weeks, like the other
insights charts.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Sum
from django.db.models.functions import TruncWeek

from projects.models import Project
from sessions_app.models import Attribution, Session


def ai_share_per_author_week(project: Project, period: Any) -> list[dict[str, Any]]:
    amended = Session.objects.filter(project=project, amends__isnull=False).exclude(amends="").values("amends")
    rows = Attribution.objects.filter(project=project, record__isnull=False).exclude(session__commit_hash__in=amended)
    if period.since:
        rows = rows.filter(session__captured_at__gte=period.since)
    if period.until:
        rows = rows.filter(session__captured_at__lte=period.until)
    if period.branch:
        rows = rows.filter(session__feature_branch=period.branch)
    grouped = (
        rows.annotate(week=TruncWeek("session__captured_at"))
        .values("week", "session__author__email")
        .annotate(added=Sum("added_lines"), ai=Sum("ai_lines"))
        .order_by("week", "session__author__email")
    )
    return [
        {
            "week": row["week"].date().isoformat(),
            "author": row["session__author__email"] or "unknown",
            "added_lines": row["added"],
            "ai_lines": row["ai"],
            "ai_share": round(row["ai"] / row["added"], 4) if row["added"] else 0.0,
        }
        for row in grouped
        if row["added"]
    ]

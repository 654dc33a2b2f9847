"""Insights' "Merged pull requests": per merged PR, the share of its added lines the agent wrote and
what its sessions cost, in merge order (registered into ``sessions_app.insights.CHARTS`` by
``integrations.apps``, so the page, its CSV and the API's insights carry it like the other charts).

Six queries whatever the number of PRs shown (at most ``MAX_MERGED``, the latest): the PRs, their
commits, the commits' relinks and sessions, the stored line totals of their records
(``Attribution.added_lines``/``ai_lines``, as the per-author share counts them) and the sessions'
token counts. A PR's lines are those of the commits it still holds; its cost is every session behind
it, as on the PR page. A PR's date is ``merged_at``: when the ledger first saw it merged.
"""

from __future__ import annotations

from typing import Any

from integrations.models import PullRequest, PullRequestCommit
from integrations.selectors import sessions_by_commit
from projects.models import Project
from sessions_app.insights import Period
from sessions_app.models import Attribution, Session
from sessions_app.prices import usage_of

MAX_MERGED = 100


def merged_pull_requests(project: Project, period: Period) -> list[dict[str, Any]]:
    prs = PullRequest.objects.filter(project=project, merged=True, merged_at__isnull=False)
    if period.since:
        prs = prs.filter(merged_at__gte=period.since)
    if period.until:
        prs = prs.filter(merged_at__lte=period.until)
    if period.branch:
        prs = prs.filter(head_ref=period.branch)
    chosen = list(prs.order_by("-merged_at")[:MAX_MERGED])
    commits = list(PullRequestCommit.objects.filter(pull_request__in=chosen))
    by_commit = sessions_by_commit(project=project, shas=sorted({c.sha for c in commits}))
    pks = [s.pk for sessions in by_commit.values() for s in sessions]
    lines = dict(
        (pk, (added, ai))
        for pk, added, ai in Attribution.objects.filter(
            project=project, session_id__in=pks, record__isnull=False
        ).values_list("session_id", "added_lines", "ai_lines")
    )
    tokens = dict(Session.objects.filter(project=project, pk__in=pks).values_list("pk", "digest__effort__tokens"))
    rows = []
    for pr in reversed(chosen):
        own = [c for c in commits if c.pull_request_id == pr.pk]
        held = {s.pk for c in own if c.still_in_pr for s in by_commit.get(c.sha, [])}
        behind = {s.pk for c in own for s in by_commit.get(c.sha, [])}
        added = sum(lines[pk][0] for pk in held if pk in lines)
        ai = sum(lines[pk][1] for pk in held if pk in lines)
        usage = usage_of(tokens.get(pk) for pk in behind)
        rows.append(
            {
                "merged": pr.merged_at.date().isoformat() if pr.merged_at else "",
                "number": pr.number,
                "title": pr.title,
                "sessions": len(behind),
                "added_lines": added,
                "ai_lines": ai,
                "ai_share": round(ai / added, 4) if added else 0.0,
                "cost_usd": round(usage.cost_usd, 4),
                "unpriced_tokens": usage.unpriced_tokens,
            }
        )
    return rows

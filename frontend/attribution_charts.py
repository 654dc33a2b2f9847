"""The insights cards of attribution: "Lines written by the agent", per author and week, the share of
the lines their commits added that the agent wrote (``sessions_app.attribution.insights``); and
"Merged pull requests", that share and the cost per merged PR (``integrations.insights``)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from markupsafe import Markup

from frontend import charts
from frontend.charts import Bar, fit, join, number, percent, rect, text
from frontend.insight_charts import MAX_AUTHORS, Card, money, week_axis
from sessions_app.insights import Period

LABEL_W, COL_W, ROW_H, HEAD_H, TOTAL_W = 190, 50, 36, 40, 150


def ai_share(rows: list[dict[str, Any]], period: Period, now: datetime | None = None) -> Card:
    card = Card(
        "ai_share_per_author_week",
        "Lines written by the agent",
        "Of the lines each author's commits added, the share the agent wrote (from the commits' attribution); "
        "below, the lines added. Top: the whole team's share that week.",
        rows,
        wide=True,
        empty="No attributed commits in this period.",
    )
    if not rows:
        return card
    weeks, cut = week_axis([date.fromisoformat(r["week"]) for r in rows], period, now or datetime.now(UTC))
    shown_weeks = {w.isoformat() for w in weeks}
    authors = _authors([r for r in rows if r["week"] in shown_weeks])
    card.svg = _svg(card, rows, weeks, authors)
    if cut:
        card.notes.append(f"Showing the latest {len(weeks)} weeks; earlier weeks are in the CSV.")
    card.shown = [r for r in rows if r["week"] in shown_weeks and r["author"] in authors]
    return card


def _authors(rows: list[dict[str, Any]]) -> list[str]:
    totals: dict[str, int] = {}
    for row in rows:
        totals[row["author"]] = totals.get(row["author"], 0) + row["added_lines"]
    return sorted(totals, key=lambda a: (-totals[a], a))[:MAX_AUTHORS]


def _svg(card: Card, rows: list[dict[str, Any]], weeks: list[date], authors: list[str]) -> Markup:
    column = {w.isoformat(): i for i, w in enumerate(weeks)}
    cells = {(r["author"], r["week"]): r for r in rows if r["week"] in column}
    parts = [_head(weeks, cells)]
    for i, author in enumerate(authors):
        parts.append(_row(author, HEAD_H + i * ROW_H, weeks, cells))
    width = LABEL_W + len(weeks) * COL_W + TOTAL_W
    added = sum(r["added_lines"] for r in rows)
    ai = sum(r["ai_lines"] for r in rows)
    desc = f"The agent wrote {percent(ai / added) if added else '0%'} of {number(added)} added lines."
    return charts.svg(
        card.name, width, HEAD_H + len(authors) * ROW_H + 4, title=card.title, desc=desc, body=join(parts)
    )


def _share(rows: list[dict[str, Any]]) -> tuple[int, int]:
    return sum(r["ai_lines"] for r in rows), sum(r["added_lines"] for r in rows)


def _head(weeks: list[date], cells: dict[tuple[str, str], dict[str, Any]]) -> Markup:
    parts = [text(LABEL_W - 10, 30, "team", cls="label muted", anchor="end")]
    for c, week in enumerate(weeks):
        x = LABEL_W + c * COL_W + COL_W / 2
        ai, added = _share([r for (_, w), r in cells.items() if w == week.isoformat()])
        parts.append(text(x, 14, f"{week:%b} {week.day}", cls="label", anchor="middle", tip=f"Week of {week}"))
        parts.append(text(x, 30, percent(ai / added) if added else "–", cls="value small", anchor="middle"))
    return join(parts)


def _row(author: str, y: int, weeks: list[date], cells: dict[tuple[str, str], dict[str, Any]]) -> Markup:
    parts = [text(LABEL_W - 10, y + 21, fit(author, LABEL_W - 14), cls="label", anchor="end", tip=author)]
    mine = []
    for c, week in enumerate(weeks):
        x, row = LABEL_W + c * COL_W, cells.get((author, week.isoformat()))
        if row is None:
            parts.append(rect(x + 2, y + 2, COL_W - 4, 32, cls="cell empty"))
            continue
        mine.append(row)
        level = 1 + round(4 * row["ai_share"])
        parts.append(rect(x + 2, y + 2, COL_W - 4, 32, cls=f"cell level-{min(level, 5)}"))
        parts.append(text(x + COL_W / 2, y + 17, percent(row["ai_share"]), cls="cell-n", anchor="middle"))
        parts.append(text(x + COL_W / 2, y + 30, number(row["added_lines"]), cls="cell-m", anchor="middle"))
    ai, added = _share(mine)
    x = LABEL_W + len(weeks) * COL_W + 10
    parts.append(text(x, y + 16, f"{percent(ai / added) if added else '0%'} by the agent", cls="value strong"))
    parts.append(text(x, y + 29, charts.counted(added, "added line"), cls="sub"))
    return join(parts)


def merged_pull_requests(rows: list[dict[str, Any]], pr_url: Any) -> Card:
    """Per merged PR, in merge order: the agent's share of its added lines as a bar, with its cost.
    ``pr_url(number)`` → the PR page each label links to."""
    card = Card(
        "merged_pull_requests",
        "Merged pull requests",
        "Per pull request merged in this period, oldest first: the share of the lines it added that the agent "
        "wrote (from its commits' attribution) and the estimated cost of the sessions behind it.",
        rows,
        wide=True,
        empty="No merged pull request in this period.",
    )
    if not rows:
        return card
    bars = [
        Bar(
            f"{date.fromisoformat(r['merged']):%b} {date.fromisoformat(r['merged']).day} #{r['number']} {r['title']}",
            round(100 * r["ai_share"]),
            f"{percent(r['ai_share']) if r['added_lines'] else '–'} of {charts.counted(r['added_lines'], 'line')}"
            f" · {money(r['cost_usd'], r['unpriced_tokens'])}",
            href=pr_url(r["number"]),
        )
        for r in rows
    ]
    ai, added = sum(r["ai_lines"] for r in rows), sum(r["added_lines"] for r in rows)
    cost = sum(r["cost_usd"] for r in rows)
    desc = (
        f"{charts.counted(len(rows), 'pull request')}: the agent wrote {percent(ai / added) if added else '0%'} "
        f"of {number(added)} added lines; ${cost:,.2f} estimated."
    )
    card.svg = charts.hbars(card.name, bars, title=card.title, desc=desc, width=760, label_w=300)
    return card

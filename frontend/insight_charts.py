"""The insights page's charts, drawn from ``sessions_app.insights`` numbers (the API's, unchanged).

Each card is one chart of the API response: an SVG with every number printed, the same rows as
a table (exactly what the CSV export holds), and the CSV link. Nothing here queries the
database; the week axis and shading are derived from the numbers alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.template.defaultfilters import filesizeformat
from markupsafe import Markup

from frontend import charts
from frontend import format as fmt
from frontend.charts import Bar, Column, Matrix, counted, number, percent
from sessions_app.insights import Period

MAX_WEEKS, MAX_AUTHORS = 26, 20
WEEK = timedelta(days=7)
OUTCOME_FILLS = {"complete": "solid", "rejected": "hatch", "abandoned": "dots"}


@dataclass
class Card:
    name: str  # the chart's name in the API (and the CSV's ``chart=``)
    title: str
    intro: str
    rows: list[dict[str, Any]]  # the API's rows, exported as CSV (and shown as the table, unless ``shown``)
    svg: Markup | None = None  # None: nothing to draw in this period
    notes: list[str] = field(default_factory=list)
    csv_url: str = ""
    wide: bool = False
    empty: str = "No sessions in this period."
    shown: list[dict[str, Any]] | None = None  # the rows drawn, when the chart draws fewer than the CSV holds

    @property
    def headers(self) -> list[str]:
        return list(self.rows[0]) if self.rows else []

    @property
    def table(self) -> list[list[tuple[Any, bool]]]:
        """The drawn rows as (value, is a number) cells, in the CSV's column order."""
        rows = self.rows if self.shown is None else self.shown
        return [[(v, isinstance(v, int | float)) for v in row.values()] for row in rows]


def cards(data: dict[str, Any], period: Period, *, branch_url: Any) -> list[Card]:
    """``branch_url(name)`` → where a branch label links (the page filtered to that branch)."""
    return [
        author_weeks(data["sessions_per_author_week"], period),
        turns_per_commit(data["turns_per_commit"]),
        task_outcomes(data["task_outcomes"]),
        tool_usage(data["tool_usage"]),
        busiest_branches(data["busiest_branches"], branch_url),
        effort_per_author(data["effort_per_author_week"]),
        effort_per_branch(data["effort_per_branch"], branch_url),
    ]


def monday(moment: datetime | date) -> date:
    day = moment.astimezone(UTC).date() if isinstance(moment, datetime) else moment
    return day - timedelta(days=day.weekday())


def week_axis(weeks: list[date], period: Period, now: datetime) -> tuple[list[date], int]:
    """Every week from the first to the last (gaps included), at most MAX_WEEKS; and how many were cut."""
    first, last = min(weeks), max(weeks)
    if period.since:
        first = min(first, monday(period.since))
    if period.since or period.until:  # a chosen period runs to its end (or to this week), quiet weeks too
        last = max(last, monday(min(period.until or now, now)))
    count = (last - first) // WEEK + 1
    shown = min(count, MAX_WEEKS)
    return [last - WEEK * i for i in reversed(range(shown))], count - shown


def author_weeks(rows: list[dict[str, Any]], period: Period, now: datetime | None = None) -> Card:
    card = Card(
        "sessions_per_author_week",
        "Sessions per author and week",
        "Top: all sessions of each week. Each cell: sessions, and turns below. A blank cell is a week without one.",
        rows,
        wide=True,
    )
    if not rows:
        return card
    weeks, cut = week_axis([date.fromisoformat(r["week"]) for r in rows], period, now or datetime.now(UTC))
    authors = _authors(rows, set(weeks))
    card.svg = charts.matrix(card.name, _matrix(rows, weeks, authors), title=card.title, desc=_desc(rows))
    if cut:
        card.notes.append(f"Showing the latest {len(weeks)} weeks; {cut} earlier week{'s' * (cut > 1)} are in the CSV.")
    hidden = len({r["author"] for r in rows if r["week"] >= weeks[0].isoformat()}) - len(authors)
    if hidden > 0:
        card.notes.append(f"{hidden} less active author{'s' * (hidden > 1)} not drawn; all are in the CSV.")
    if cut or hidden > 0:
        drawn = {w.isoformat() for w in weeks}
        card.shown = [r for r in rows if r["week"] in drawn and r["author"] in authors]
    return card


def _authors(rows: list[dict[str, Any]], weeks: set[date]) -> list[str]:
    """The busiest authors of the weeks shown, busiest first."""
    totals: dict[str, int] = {}
    for row in rows:
        if date.fromisoformat(row["week"]) in weeks:
            totals[row["author"]] = totals.get(row["author"], 0) + row["sessions"]
    return sorted(totals, key=lambda author: (-totals[author], author))[:MAX_AUTHORS]


def _matrix(rows: list[dict[str, Any]], weeks: list[date], authors: list[str]) -> Matrix:
    column = {week: i for i, week in enumerate(weeks)}
    row_of = {author: i for i, author in enumerate(authors)}
    notes = [str(w.year) if i == 0 or w.year != weeks[i - 1].year else "" for i, w in enumerate(weeks)]
    m = Matrix(
        columns=[f"{w:%b} {w.day}" for w in weeks],
        column_notes=notes,
        column_tips=[f"Week of {w.isoformat()}" for w in weeks],
        rows=authors,
    )
    for r in rows:
        week = date.fromisoformat(r["week"])
        if week in column and r["author"] in row_of:
            m.cells[(row_of[r["author"]], column[week])] = (r["sessions"], r["turns"])
    return m


def _desc(rows: list[dict[str, Any]]) -> str:
    sessions, turns = sum(r["sessions"] for r in rows), sum(r["turns"] for r in rows)
    authors = len({r["author"] for r in rows})
    return f"{sessions:,} sessions and {turns:,} turns by {authors} author{'s' * (authors != 1)}."


def turns_per_commit(rows: list[dict[str, Any]]) -> Card:
    card = Card(
        "turns_per_commit",
        "Turns per commit",
        (
            "Commits (checkpoint sessions) by how many turns they took (0: made by an agent working on alone, "
            "with no prompt since the last commit); below, the average messages per commit."
        ),
        rows,
        empty="No commits in this period.",
    )
    if not any(r["commits"] for r in rows):
        return card
    cols = [
        Column(
            f"{r['turns']} turn{'s' * (r['turns'] != '1')}",
            r["commits"],
            f"{number(round(r['messages'] / r['commits']))} msgs avg" if r["commits"] else "",
        )
        for r in rows
    ]
    total = sum(r["commits"] for r in rows)
    desc = "; ".join(f"{r['turns']} turns: {r['commits']} commits" for r in rows)
    card.svg = charts.columns(card.name, cols, title=card.title, desc=f"{total:,} commits. {desc}.")
    return card


def task_outcomes(rows: list[dict[str, Any]]) -> Card:
    card = Card(
        "task_outcomes",
        "Task outcomes",
        "How task sessions ended. Solid: complete, hatched: rejected, dotted: abandoned.",
        rows,
        empty="No task sessions in this period.",
    )
    if not any(r["sessions"] for r in rows):
        return card
    bars = [
        Bar(
            r["status"],
            r["sessions"],
            f"{number(r['sessions'])} · {percent(r['rate'])}",
            fill=OUTCOME_FILLS[r["status"]],
        )
        for r in rows
    ]
    desc = "; ".join(f"{r['status']}: {r['sessions']} ({percent(r['rate'])})" for r in rows)
    card.svg = charts.hbars(card.name, bars, title=card.title, desc=desc + ".", label_w=110)
    return card


def tool_usage(rows: list[dict[str, Any]]) -> Card:
    card = Card(
        "tool_usage",
        "Tool usage",
        "Most used tools by calls; the hatched start of a bar is the calls that failed.",
        rows,
        empty="No tool calls in this period.",
    )
    if not rows:
        return card
    bars = [Bar(r["tool"], r["calls"], _tool_caption(r), part=r["errors"]) for r in rows]
    desc = "; ".join(f"{r['tool']}: {r['calls']} calls, {r['errors']} errors" for r in rows)
    card.svg = charts.hbars(card.name, bars, title=card.title, desc=desc + ".")
    return card


def _tool_caption(row: dict[str, Any]) -> str:
    if not row["errors"]:
        return f"{counted(row['calls'], 'call')} · no errors"
    return f"{counted(row['calls'], 'call')} · {number(row['errors'])} failed ({percent(row['error_rate'])})"


def busiest_branches(rows: list[dict[str, Any]], branch_url: Any) -> Card:
    card = Card(
        "busiest_branches",
        "Busiest branches",
        "Branches with the most sessions. A branch's name narrows this page to it.",
        rows,
        empty="No sessions on a named branch in this period.",
    )
    if not rows:
        return card
    bars = [
        Bar(
            r["branch"],
            r["sessions"],
            f"{counted(r['sessions'], 'session')} · {counted(r['turns'], 'turn')}",
            href=branch_url(r["branch"]),
        )
        for r in rows
    ]
    desc = "; ".join(f"{r['branch']}: {r['sessions']} sessions" for r in rows)
    card.svg = charts.hbars(card.name, bars, title=card.title, desc=desc + ".", label_w=190)
    return card


EFFORT_INTRO = (
    "Estimated cost (tokens × the operator's price table), active time (gaps under 5 minutes), time spent in "
    "tools, and steps (prompts and tool calls) per commit. Sessions captured before these facts existed are "
    "not counted until reprocessed."
)


def _hours(minutes: int) -> str:
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


def money(cost: float, unpriced: int) -> str:
    """``$1.23``; ``unpriced`` when every token is of a model the price table lacks (never ``$0.00``),
    ``$1.23 + unpriced`` when some are."""
    if not unpriced:
        return f"${cost:,.2f}"
    return f"${cost:,.2f} + unpriced" if cost else "unpriced"


def _effort_caption(row: dict[str, Any]) -> str:
    per_commit = f" · {row['steps_per_commit']} steps/commit" if row["commits"] else ""
    return f"{money(row['cost_usd'], row['unpriced_tokens'])} · {_hours(row['active_minutes'])} active{per_commit}"


def _effort_bars(totals: list[dict[str, Any]], label: str, href: Any = None) -> list[Bar]:
    return [
        Bar(
            r[label],
            max(round(r["cost_usd"] * 100), 0) or r["active_minutes"],
            _effort_caption(r),
            href=href(r[label]) if href else "",
        )
        for r in totals
    ]


def _by(rows: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """Rows of several weeks added up per ``name`` (author), most expensive first."""
    totals: dict[str, dict[str, Any]] = {}
    for row in rows:
        t = totals.setdefault(
            row[name],
            {name: row[name], "cost_usd": 0.0, "unpriced_tokens": 0, "active_minutes": 0, "steps": 0, "commits": 0},
        )
        for key in ("cost_usd", "unpriced_tokens", "active_minutes", "steps", "commits"):
            t[key] += row[key]
    for t in totals.values():
        t["cost_usd"] = round(t["cost_usd"], 2)
        t["steps_per_commit"] = round(t["steps"] / t["commits"], 1) if t["commits"] else 0.0  # 0: no commit
    return sorted(totals.values(), key=lambda t: (-t["cost_usd"], -t["active_minutes"], t[name]))


def effort_per_author(rows: list[dict[str, Any]]) -> Card:
    card = Card(
        "effort_per_author_week",
        "Cost and time per author",
        EFFORT_INTRO + " The numbers below and the CSV are per week.",
        rows,
        empty="No session with token and time facts in this period.",
    )
    totals = _by(rows, "author")[:MAX_AUTHORS]
    if not totals:
        return card
    desc = "; ".join(f"{t['author']}: {_effort_caption(t)}" for t in totals)
    card.svg = charts.hbars(card.name, _effort_bars(totals, "author"), title=card.title, desc=desc + ".", width=720)
    return card


def effort_per_branch(rows: list[dict[str, Any]], branch_url: Any) -> Card:
    card = Card(
        "effort_per_branch",
        "Cost and time per branch",
        "The same totals per branch over the period, most expensive first. A branch's name narrows this page to it.",
        rows,
        empty="No session on a named branch with token and time facts in this period.",
    )
    if not rows:
        return card
    desc = "; ".join(f"{r['branch']}: {_effort_caption(r)}" for r in rows)
    bars = _effort_bars(rows, "branch", branch_url)
    card.svg = charts.hbars(card.name, bars, title=card.title, desc=desc + ".", width=720, label_w=190)
    return card


def summary(data: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(label, value, detail) tiles above the charts."""
    tasks = {r["status"]: r for r in data["task_outcomes"]}
    task_total = sum(r["sessions"] for r in tasks.values())
    size = data["size"]
    return [
        ("Sessions", number(size["sessions"]), ""),
        ("Turns", number(sum(r["turns"] for r in data["sessions_per_author_week"])), ""),
        ("Commits", number(sum(r["commits"] for r in data["turns_per_commit"])), "with a session"),
        ("Task sessions", number(task_total), f"{percent(tasks['complete']['rate'])} complete" if task_total else ""),
        _cost_tile(data["effort_per_author_week"]),
        ("Median session", _size(size["median_raw_bytes"]), f"{_size(size['median_stored_bytes'])} stored")
        if size["sessions"]
        else ("Median session", "—", ""),
    ]


def _cost_tile(rows: list[dict[str, Any]]) -> tuple[str, str, str]:
    if not rows:
        return ("Estimated cost", "—", "")
    cost = sum(r["cost_usd"] for r in rows)
    active = sum(r["active_minutes"] for r in rows)
    tokens = sum(
        r["input_tokens"] + r["output_tokens"] + r["cache_write_tokens"] + r["cache_read_tokens"] for r in rows
    )
    unpriced = sum(r["unpriced_tokens"] for r in rows)
    detail = f"{_hours(active)} active · {fmt.short_number(tokens)} tokens"
    if unpriced:
        detail += f" ({fmt.short_number(unpriced)} unpriced)"
    return ("Estimated cost", money(cost, unpriced), detail)


def _size(n: int) -> str:
    return str(filesizeformat(n))  # as the session list and page show sizes

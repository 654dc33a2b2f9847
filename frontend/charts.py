"""Server-rendered SVG charts: every number printed as text, patterns and labels rather than colour.

A chart reads the same in greyscale, on paper or to a screen reader (each SVG has a title and a
description; the page repeats the numbers in a table). Colour only echoes what the text says.
No ``style`` attribute anywhere (the CSP forbids inline styles): classes styled by app.css, and
presentation attributes (``fill="url(#…)"``) for patterns, whose ids carry the chart's name so
several charts share a page. Python lays the shapes out; ``frontend/jinja2/frontend/charts.html``
writes them (every text escaped); returns ``Markup``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from markupsafe import Markup

from frontend.templating import Macros, macros

CHAR_W = 7.2  # px per character of the 12px chart font, to fit labels without measuring text
FILLS = ("solid", "hatch", "dots")


def fit(text: str, width: float) -> str:
    """``text`` shortened with an ellipsis to about ``width`` pixels."""
    limit = max(3, int(width / CHAR_W))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def number(value: int | float) -> str:
    return f"{value:,}"


def counted(n: int, noun: str) -> str:
    """``1 session``, ``2 sessions``."""
    return f"{number(n)} {noun}{'' if n == 1 else 's'}"


def percent(rate: float) -> str:
    return f"{rate * 100:.1f}%" if 0 < rate < 0.1 else f"{rate * 100:.0f}%"


def join(parts: Iterable[Markup | None]) -> Markup:
    """The shapes one after the other (a ``None`` is no shape)."""
    return Markup("").join(part for part in parts if part)


def svg(name: str, width: int, height: int, *, title: str, desc: str, body: Markup, linked: bool = False) -> Markup:
    """``linked``: some labels are links. An image's parts are hidden from assistive technology,
    so such a chart is a group (its title and description still name it)."""
    return _macros().svg(name, width, height, title, desc, body, "group" if linked else "img")


def _px(value: float) -> str:
    return f"{value:.1f}"


def text(x: float, y: float, content: str, *, cls: str = "", anchor: str = "start", tip: str = "") -> Markup:
    """A text element; ``tip`` (e.g. the unshortened label) becomes its tooltip."""
    return _macros().text(_px(x), _px(y), content, cls, anchor, tip)


def rect(x: float, y: float, w: float, height: float, *, cls: str, fill: str = "") -> Markup:
    return _macros().rect(_px(x), _px(y), _px(max(w, 0)), _px(height), cls, fill)


def link(href: str, inner: Markup) -> Markup:
    return _macros().link(href, inner) if href else inner


def _fill(name: str, kind: str) -> str:
    """A pattern fill for ``hatch``/``dots``; solid bars take their colour from the stylesheet."""
    return f"url(#{name}-{kind})" if kind in ("hatch", "dots") else ""


@dataclass
class Bar:
    label: str
    value: int
    caption: str  # the printed value, e.g. "1,234 calls · 56 errors (4.5%)"
    part: int = 0  # a share of ``value`` drawn hatched (errors among calls)
    fill: str = "solid"
    href: str = ""


def hbars(name: str, bars: list[Bar], *, title: str, desc: str, width: int = 600, label_w: int = 170) -> Markup:
    """Horizontal bars, one per row: label left, bar, then the value printed after the bar's end."""
    row_h, caption_w = 28, max(len(b.caption) for b in bars) * CHAR_W + 12
    span = max(width - label_w - caption_w - 8, 60)
    top = max((b.value for b in bars), default=0) or 1
    rows = [_hbar(name, i * row_h, bar, label_w, span * bar.value / top) for i, bar in enumerate(bars)]
    linked = any(bar.href for bar in bars)
    return svg(name, width, len(bars) * row_h + 2, title=title, desc=desc, body=join(rows), linked=linked)


def _hbar(name: str, y: int, bar: Bar, label_w: int, length: float) -> Markup:
    length = max(length, 2.0) if bar.value else 0.0
    label = text(label_w - 10, y + 18, fit(bar.label, label_w - 14), cls="label", anchor="end", tip=bar.label)
    parts = [link(bar.href, label), rect(label_w, y + 6, length, 16, cls=f"bar {bar.fill}", fill=_fill(name, bar.fill))]
    if bar.part and bar.value:
        share = max(length * bar.part / bar.value, 2.0)
        parts.append(rect(label_w, y + 6, share, 16, cls="bar-part", fill=_fill(name, "hatch")))
    parts.append(text(label_w + length + 6, y + 18, bar.caption, cls="value"))
    return join(parts)


@dataclass
class Column:
    label: str
    value: int
    sub: str = ""  # a second line under the label


def columns(name: str, cols: list[Column], *, title: str, desc: str, width: int = 600, plot_h: int = 120) -> Markup:
    """Vertical bars over categories, each value printed on top and its label (and ``sub``) below."""
    slot = width / max(len(cols), 1)
    top = max((c.value for c in cols), default=0) or 1
    body = [_macros().axis(plot_h + 24, width)]
    for i, col in enumerate(cols):
        body.append(_column(i * slot, slot, col, plot_h * col.value / top, plot_h))
    return svg(name, width, plot_h + 66, title=title, desc=desc, body=join(body))


def _column(x: float, slot: float, col: Column, height: float, plot_h: int) -> Markup:
    bar_w, base = min(slot * 0.55, 72), plot_h + 24
    height = max(height, 2.0) if col.value else 0.0
    middle = x + slot / 2
    return join(
        [
            rect(middle - bar_w / 2, base - height, bar_w, height, cls="bar solid"),
            text(middle, base - height - 6, number(col.value), cls="value strong", anchor="middle"),
            text(middle, base + 18, col.label, cls="label", anchor="middle"),
            text(middle, base + 36, col.sub, cls="sub", anchor="middle") if col.sub else None,
        ]
    )


@dataclass
class Matrix:
    """Rows × columns of (count, second count) cells, with column totals drawn as bars on top."""

    columns: list[str]  # column labels (first line)
    column_notes: list[str]  # a second, smaller line (e.g. the year where it changes)
    column_tips: list[str]
    rows: list[str]
    cells: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)  # (row, col) → (n, m)
    unit: str = "session"
    second_unit: str = "turn"


def matrix(name: str, m: Matrix, *, title: str, desc: str, label_w: int = 190, col_w: int = 46) -> Markup:
    """Column totals as bars (value printed), then one row per label with both counts in each cell.

    The row labels are an SVG of their own, before the grid's: app.css keeps it at the frame's left
    edge while a grid wider than the screen scrolls under it (it opens at its latest week), so every
    row stays named. It is hidden from assistive technology like any image's parts; the grid's
    description and the table below name the rows."""
    bars_h, head_h, row_h, total_w = 64, 34, 36, 96
    width, top = len(m.columns) * col_w + total_w, bars_h + head_h
    totals = [sum(m.cells.get((r, c), (0, 0))[0] for r in range(len(m.rows))) for c in range(len(m.columns))]
    peak, cell_peak = max(totals, default=0) or 1, max((n for n, _ in m.cells.values()), default=0) or 1
    labels = [text(label_w - 10, bars_h - 4, f"all {m.unit}s", cls="label muted", anchor="end")]
    body = [_matrix_head(m, totals, peak, label_w, col_w, bars_h)]
    for r, label in enumerate(m.rows):
        y = top + r * row_h
        labels.append(text(label_w - 10, y + 21, fit(label, label_w - 14), cls="label", anchor="end", tip=label))
        body.append(_matrix_row(m, r, y, cell_peak, label_w, col_w))
    height = top + len(m.rows) * row_h + 4
    grid = _macros().svg(name, width, height, title, desc, join(body), "img", label_w)
    return _macros().labels(label_w, height, join(labels)) + grid


def _matrix_head(m: Matrix, totals: list[int], peak: int, label_w: int, col_w: int, bars_h: int) -> Markup:
    parts: list[Markup] = []
    for c, total in enumerate(totals):
        x, height = label_w + c * col_w, (bars_h - 22) * total / peak
        height = max(height, 2.0) if total else 0.0
        parts.append(rect(x + 8, bars_h - height, col_w - 16, height, cls="bar solid"))
        parts.append(text(x + col_w / 2, bars_h - height - 4, number(total), cls="value small", anchor="middle"))
        parts.append(text(x + col_w / 2, bars_h + 16, m.columns[c], cls="label", anchor="middle", tip=m.column_tips[c]))
        if m.column_notes[c]:
            parts.append(text(x + col_w / 2, bars_h + 29, m.column_notes[c], cls="sub", anchor="middle"))
    return join(parts)


def _matrix_row(m: Matrix, r: int, y: int, peak: int, label_w: int, col_w: int) -> Markup:
    parts: list[Markup] = []
    row_n = row_m = 0
    for c in range(len(m.columns)):
        n, second = m.cells.get((r, c), (0, 0))
        row_n, row_m = row_n + n, row_m + second
        parts.append(_cell(label_w + c * col_w, y, col_w, n, second, peak, m))
    x = label_w + len(m.columns) * col_w + 10
    parts.append(text(x, y + 16, counted(row_n, m.unit), cls="value strong"))
    parts.append(text(x, y + 29, counted(row_m, m.second_unit), cls="sub"))
    return join(parts)


def _cell(x: float, y: float, col_w: int, n: int, second: int, peak: int, m: Matrix) -> Markup:
    if not n:
        return rect(x + 2, y + 2, col_w - 4, 32, cls="cell empty")
    level = 1 + round(4 * n / peak) if peak else 1  # five shades, a redundant echo of the printed number
    return join(
        [
            rect(x + 2, y + 2, col_w - 4, 32, cls=f"cell level-{min(level, 5)}"),
            text(x + col_w / 2, y + 17, number(n), cls="cell-n", anchor="middle"),
            text(x + col_w / 2, y + 30, number(second), cls="cell-m", anchor="middle"),
        ]
    )


def _macros() -> Macros:
    return macros("frontend/charts.html")

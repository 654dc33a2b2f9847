"""Small formatting helpers shared by templates (``ledger`` tags) and the card renderer.

Text helpers return plain ``str`` (escaped wherever they are printed); ``icon`` returns
``Markup`` (``frontend/jinja2/frontend/icon.html``). Times are shown in UTC everywhere, so the
times on a page match the time-range filter, which is in UTC too.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any
from urllib.parse import urlencode

from django.http import QueryDict
from markupsafe import Markup

from frontend.icons import ICON_PATHS
from frontend.templating import macros

USAGE_LABELS = (
    ("input_tokens", "input"),
    ("cache_read_input_tokens", "cache read"),
    ("cache_creation_input_tokens", "cache write"),
    ("output_tokens", "output"),
)


@lru_cache(maxsize=128)
def icon(name: str, label: str = "") -> Markup:
    """An inline SVG icon (emoji fonts are often missing); decorative unless given a label."""
    return macros("frontend/icon.html").icon(name, ICON_PATHS.get(name, ICON_PATHS["dot"]), label)


def moment(value: Any) -> datetime | None:
    """A datetime in UTC from a datetime or an ISO 8601 string (naive means UTC)."""
    if not isinstance(value, datetime):
        try:
            value = datetime.fromisoformat(str(value).replace("Z", "+00:00")) if value else None
        except ValueError:
            return None
    if value is None:
        return None
    return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)


_UTC_TEXT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z\Z")


def _utc_text(value: Any) -> bool:
    """``2026-02-10T21:00:03.000Z``, as the parser writes it: sliced, not parsed (pages show hundreds).

    Checked digit by digit: a document from an older parser may hold any text as a timestamp.
    """
    return isinstance(value, str) and len(value) <= 30 and _UTC_TEXT.match(value) is not None


def clock(value: Any) -> str:
    """``21:00:03`` (UTC) for a message timestamp."""
    if _utc_text(value):
        return value[11:19]
    stamp_ = moment(value)
    return stamp_.strftime("%H:%M:%S") if stamp_ else ""


def stamp(value: Any) -> str:
    """``2026-02-10 21:00:03 UTC``."""
    if _utc_text(value):
        return f"{value[:10]} {value[11:19]} UTC"
    stamp_ = moment(value)
    return stamp_.strftime("%Y-%m-%d %H:%M:%S UTC") if stamp_ else ""


def iso(value: Any) -> str:
    if _utc_text(value):
        return value
    stamp_ = moment(value)
    return stamp_.isoformat() if stamp_ else ""


def local_input(value: Any) -> str:
    """A ``datetime-local`` input value in UTC (``2026-02-10T21:00:03``)."""
    stamp_ = moment(value)
    return stamp_.strftime("%Y-%m-%dT%H:%M:%S") if stamp_ else ""


def short_number(value: Any) -> str:
    if not isinstance(value, int):
        return ""
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    return f"{value / 1000:.1f}k" if value >= 1000 else str(value)


def tokens(usage: Any) -> str:
    """``2.5k in · 12 out`` — one response's tokens, compact: "in" is all its input (uncached, cache
    read and cache write, which ``usage_title`` spells out), "out" its output."""
    if not isinstance(usage, dict):
        return ""
    counts = {
        key: v if isinstance(v := usage.get(key), int) and not isinstance(v, bool) else None for key, _ in USAGE_LABELS
    }
    out = counts.pop("output_tokens")
    inputs = [n for n in counts.values() if n is not None]
    parts = ([f"{short_number(sum(inputs))} in"] if inputs else []) + (
        [f"{short_number(out)} out"] if out is not None else []
    )
    return " · ".join(parts)


def usage_title(usage: Any) -> str:
    """``input 3 · cache read 2,400 · cache write 120 · output 12 tokens``."""
    if not isinstance(usage, dict):
        return ""
    parts = [f"{label} {usage[key]:,}" for key, label in USAGE_LABELS if isinstance(usage.get(key), int)]
    return " · ".join(parts) + " tokens" if parts else ""


def local_part(email: Any) -> str:
    return str(email or "").split("@", 1)[0]


def query_string(params: Any, **changes: Any) -> str:
    """``?a=1&b=2`` from a QueryDict or dict, with ``changes`` applied (None or "" removes a key)."""
    data = params.copy() if isinstance(params, QueryDict) else QueryDict(mutable=True)
    if not isinstance(params, QueryDict):
        for key, value in (params or {}).items():
            data.setlist(key, value if isinstance(value, list) else [value])
    for key, value in changes.items():
        data.pop(key, None)
        if value not in (None, ""):
            data[key] = value
    encoded = urlencode(list(data.lists()), doseq=True)
    return f"?{encoded}" if encoded else "?"


def duration(milliseconds: Any) -> str:
    """A duration for people: ``850 ms``, ``39 s``, ``4 min 12 s``, ``1 h 05 min``."""
    if not isinstance(milliseconds, int) or isinstance(milliseconds, bool) or milliseconds < 0:
        return ""
    if milliseconds < 1000:
        return f"{milliseconds} ms"
    seconds = round(milliseconds / 1000)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s" if seconds else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"

"""Keyset pagination of session lists on (captured_at, id), newest first; one query per page.

The cursor is opaque to users (URL-safe base64) but carries its direction, so both "older" and
"newer" links are keyset queries — no OFFSET, no COUNT, stable while new sessions arrive.
"""

from __future__ import annotations

import base64
import binascii
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Q, QuerySet

OLDER, NEWER = "o", "n"


@dataclass
class KeysetPage:
    items: list[Any]
    older: str | None  # cursor of the next (older) page
    newer: str | None  # cursor of the previous (newer) page


def encode_cursor(direction: str, row: Any) -> str:
    text = f"{direction}|{row.captured_at.isoformat()}|{row.pk}"
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, datetime, uuid.UUID] | None:
    """(direction, captured_at, id), or None for a missing or tampered cursor (→ first page)."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        direction, stamp, pk = text.split("|")
        position = (direction, datetime.fromisoformat(stamp), uuid.UUID(pk))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return None
    return position if direction in (OLDER, NEWER) and position[1].tzinfo else None


def keyset_page(queryset: QuerySet, cursor: str | None, limit: int) -> KeysetPage:
    position = decode_cursor(cursor) if cursor else None
    if position is None:
        rows = list(queryset.order_by("-captured_at", "-id")[: limit + 1])
        return KeysetPage(rows[:limit], _cursor(OLDER, rows, limit), None)
    direction, stamp, pk = position
    if direction == OLDER:
        after = Q(captured_at__lt=stamp) | Q(captured_at=stamp, id__lt=pk)
        rows = list(queryset.filter(after).order_by("-captured_at", "-id")[: limit + 1])
        return KeysetPage(rows[:limit], _cursor(OLDER, rows, limit), _first(rows))
    before = Q(captured_at__gt=stamp) | Q(captured_at=stamp, id__gt=pk)
    rows = list(queryset.filter(before).order_by("captured_at", "id")[: limit + 1])
    more_newer = len(rows) > limit
    rows = rows[:limit][::-1]
    return KeysetPage(
        rows, encode_cursor(OLDER, rows[-1]) if rows else None, encode_cursor(NEWER, rows[0]) if more_newer else None
    )


def _cursor(direction: str, rows: list[Any], limit: int) -> str | None:
    return encode_cursor(direction, rows[limit - 1]) if len(rows) > limit else None


def _first(rows: list[Any]) -> str | None:
    return encode_cursor(NEWER, rows[0]) if rows else None

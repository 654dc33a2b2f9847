"""Hostile input stopped at the edge: what a member or a visitor sends is checked before it can
reach PostgreSQL, a regex or a URL pattern (docs/security.md, "Hostile input").

PostgreSQL refuses NUL in text and JSON, and lone surrogates cannot be encoded at all: either
would surface as a 500 deep inside a view or the worker. Control characters in identifiers
(branch, task id, agent session id) break links: ``/p/{project}/b/{branch}`` cannot be reversed
for a branch containing a newline, so every page showing that branch would fail.
"""

from __future__ import annotations

import re
from typing import Any

from django.core.exceptions import ValidationError

from projects.errors import DomainError

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
SURROGATE = re.compile(r"[\ud800-\udfff]")
MAX_DB_INT = 2**63 - 1  # PostgreSQL bigint
MAX_USER_ID_DIGITS = 18
MAX_QUERY_CHARS = 1000  # full-text search input
NOT_RUNS = re.compile(r"-(?:\s*-)+")  # "- - -x": each `-` nests a NOT; ~40 overflow the tsquery stack


def no_control_characters(value: str) -> None:
    """A validator for identifiers shown in links: no newline, tab, NUL or other control character."""
    if CONTROL.search(value):
        raise ValidationError("must not contain control characters (newline, tab, NUL, …)")


def text_problem(value: str) -> str | None:
    if "\x00" in value:
        return "contains a NUL character"
    if SURROGATE.search(value):
        return "contains a lone surrogate (not valid Unicode)"
    return None


def refuse_unstorable_text(data: Any, path: str = "") -> None:
    """Every key and string of a JSON document must be storable; the first one that is not is a 400."""
    if isinstance(data, str):
        _refuse_text(data, path)
    elif isinstance(data, dict):
        for key, value in data.items():
            _refuse_text(key, f"{path}.{key}" if path else key)
            refuse_unstorable_text(value, f"{path}.{key}" if path else key)
    elif isinstance(data, list):
        for index, value in enumerate(data):
            refuse_unstorable_text(value, f"{path}[{index}]")


def _refuse_text(value: str, path: str) -> None:
    problem = text_problem(value)
    if problem:
        printable = path.encode("unicode_escape", "backslashreplace").decode()[:200]
        raise DomainError("invalid", f"{printable} {problem}.", field=printable)


def author_value(value: str) -> None:
    """``author`` is an e-mail address or a numeric user id that fits the id column."""
    if value.isascii() and value.isdigit():
        if len(value) > MAX_USER_ID_DIGITS:
            raise ValidationError("A user id has at most %(n)d digits.", params={"n": MAX_USER_ID_DIGITS})
        return
    if "@" not in value:
        raise ValidationError("author is an e-mail address or a numeric user id.")


def search_text(text: str) -> str:
    """Full-text input with runs of NOT operators collapsed: PostgreSQL's web-search parser nests
    one level per ``-`` and fails on a few dozen ("tsquery stack too small")."""
    return NOT_RUNS.sub("-", text)

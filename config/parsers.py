"""JSON request bodies the rest of the server can hold without a 500.

Python's JSON decoder recurses once per level of nesting: ``[[[[…]]]]`` a few thousand levels deep
raised RecursionError out of the parser, and a body just under the interpreter's limit parsed, then
broke whatever walked it later (a serializer's JSONField dumps it again, deeper in the stack). A
``\\ud800`` escape decodes to a lone surrogate, which no UTF-8 response, log line or database row can
hold: a field echoing it in its 400 failed as the 400 was written. Both are a 400 here, before any
view sees the data. Every JSON body of the API is read by this parser (settings.REST_FRAMEWORK).
"""

from __future__ import annotations

import json
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

MAX_DEPTH = 32  # the deepest body of the API (attribution/match) has 4 levels


def too_deep(data: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``data`` nests lists and objects more than ``limit`` levels (iterative: no recursion)."""
    pending: list[tuple[Any, int]] = [(data, 1)] if isinstance(data, dict | list) else []
    while pending:
        value, depth = pending.pop()
        if depth > limit:
            return True
        children = value.values() if isinstance(value, dict) else value
        pending.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def encodable(data: Any) -> bool:
    """Whether every string of ``data`` (keys too) can be written as UTF-8: no lone surrogate."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser, refusing nesting deeper than ``MAX_DEPTH`` and text that is not Unicode."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(f"JSON parse error - nested deeper than {MAX_DEPTH} levels.") from None
        if too_deep(data):
            raise ParseError(f"JSON parse error - nested deeper than {MAX_DEPTH} levels.")
        if not encodable(data):
            raise ParseError("JSON parse error - a string holds a lone surrogate (\\ud800-\\udfff), which is not text.")
        return data

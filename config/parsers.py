"""JSON request bodies the rest of the server can hold without a 500.

Python's JSON decoder recurses once per level of nesting: ``[[[[…]]]]`` a few thousand levels deep
raised RecursionError out of the parser, and a body just under the interpreter's limit parsed, then
broke whatever walked it later (a serializer's JSONField dumps it again, deeper in the stack). A
``\\ud800`` escape decodes to a lone surrogate, which no UTF-8 response, log line or database row can
hold: a field echoing it in its 400 failed as the 400 was written. Both are a 400 here, before any
view sees the data. Every JSON body of the API is read by this parser (settings.REST_FRAMEWORK).
"""

from __future__ import annotations

import io
import json
import re
from itertools import chain
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

MAX_DEPTH = 32  # the deepest body of the API (attribution/match) has 4 levels
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def too_deep(data: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``data`` nests lists and objects more than ``limit`` levels: one level at a time, no
    recursion, each value looked at once."""
    level = [data] if isinstance(data, dict | list) else []
    for _ in range(limit):
        values = chain.from_iterable(value.values() if isinstance(value, dict) else value for value in level)
        level = [value for value in values if isinstance(value, dict | list)]
        if not level:
            return False
    return True


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
        body = stream.read()
        try:
            data = super().parse(io.BytesIO(body), media_type, parser_context)
        except RecursionError:
            raise ParseError(f"JSON parse error - nested deeper than {MAX_DEPTH} levels.") from None
        if too_deep(data):
            raise ParseError(f"JSON parse error - nested deeper than {MAX_DEPTH} levels.")
        # UTF-8 cannot carry a surrogate: only a \uD800-\uDFFF escape makes one, so most bodies skip the check
        if _SURROGATE_ESCAPE.search(body) and not encodable(data):
            raise ParseError("JSON parse error - a string holds a lone surrogate (\\ud800-\\udfff), which is not text.")
        return data

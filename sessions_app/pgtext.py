"""The last wall before PostgreSQL: text it cannot store is made storable, never fatal.

PostgreSQL refuses NUL in ``text`` and in JSON strings, and a lone surrogate cannot be encoded
to UTF-8 at all; either one in a prompt made the final write of a session fail (a ``DataError``)
and left the session ``processing`` forever. Parsers are expected to clean their output, and
ingest refuses such metadata; this catches whatever still gets through, on everything the
worker writes to the row.
"""

from __future__ import annotations

import re
from typing import Any

SURROGATE = re.compile(r"[\ud800-\udfff]")


def pg_safe(value: Any) -> Any:
    """``value`` with NUL removed and lone surrogates replaced by U+FFFD, in every nested string."""
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, dict):
        return {_text(key) if isinstance(key, str) else key: pg_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [pg_safe(item) for item in value]
    return value


def _text(value: str) -> str:
    if "\x00" in value:
        value = value.replace("\x00", "")
    if SURROGATE.search(value):
        value = SURROGATE.sub("\ufffd", value)
    return value

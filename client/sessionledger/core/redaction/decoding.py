"""Equivalent encodings of a secret: match on the decoded form, redact the original bytes.

A secret reaches a transcript escaped as often as plain: a JSON document printed by a tool holds
`\\u0041` escapes and `\\/` slashes (a Slack webhook in `gh api` output), an HTML page holds
`&amp;`, a URL holds `%40` in its password. A line holding any of them is decoded once more,
with a map from each decoded byte back to the bytes it came from, so a span found in the decoded
line redacts exactly the original bytes it covers. Only characters that cannot change the JSON
structure of the line are decoded (never a quote, a backslash or a control character). Lines
without an escape are never touched: one regex pass finds the few lines that need decoding.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_MAX_LINE = 1 << 20  # longer lines are not decoded (a map costs a list entry per byte)
# \u00XX (JSON; one or two backslashes: a JSON text inside a JSON string), \/ (JSON's escaped
# solidus), HTML character references, %XX (URL percent-encoding)
_ESCAPE = re.compile(
    rb"\\{1,2}u00([2-7][0-9a-fA-F])|\\{1,2}/|&(amp|lt|gt|apos|#[0-9]{2,3}|#[xX][0-9a-fA-F]{2});|%([2-7][0-9a-fA-F])"
)
_ENTITIES = {b"amp": b"&", b"lt": b"<", b"gt": b">", b"apos": b"'"}
_UNSAFE = frozenset(b'"\\\x7f')


class Decoded:
    """A line decoded once, and the way back: `origin(i)` is where decoded byte i came from."""

    def __init__(self, line: bytes) -> None:
        pieces: list[bytes] = []
        starts: list[int] = []
        done = 0
        for match in _ESCAPE.finditer(line):
            char = _decode(match)
            if char is None:
                continue
            pieces.append(line[done : match.start()])
            starts.extend(range(done, match.start()))
            pieces.append(char)
            starts.append(match.start())
            done = match.end()
        pieces.append(line[done:])
        starts.extend(range(done, len(line) + 1))  # one past the end maps to the line's end
        self.data = b"".join(pieces)
        self._starts = starts
        self.changed = done > 0

    def origin(self, start: int, end: int) -> tuple[int, int]:
        """The original byte range of decoded bytes [start, end)."""
        return self._starts[start], self._starts[end]


def _decode(match: re.Match[bytes]) -> bytes | None:
    hex_code = match.group(1) or match.group(3)
    if hex_code is not None:
        char = bytes((int(hex_code, 16),))
        return None if char[0] in _UNSAFE else char
    entity = match.group(2)
    if entity is None:
        return b"/"
    if entity in _ENTITIES:
        return _ENTITIES[entity]
    code = int(entity[2:], 16) if entity[1:2] in (b"x", b"X") else int(entity[1:])
    return bytes((code,)) if 0x20 <= code < 0x7F and code not in _UNSAFE else None


def encoded_lines(data: bytes) -> Iterator[tuple[int, int]]:
    """(start, end) of each line holding an escape worth decoding, in order."""
    end = -1
    for match in _ESCAPE.finditer(data):
        if match.start() < end:
            continue
        start = data.rfind(b"\n", 0, match.start()) + 1
        end = data.find(b"\n", match.start())
        end = len(data) if end < 0 else end
        if end - start <= _MAX_LINE:
            yield start, end

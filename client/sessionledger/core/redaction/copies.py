"""Claude Code's duplicated tool output: find the copy the scans may skip, and map spans into it.

A tool_result line carries its output twice: in `message.content` (what the model read; a Read
result numbered `     5→…`, often followed by a `<system-reminder>`) and in `toolUseResult`
(`stdout` for Bash, `file.content` for Read). When the second copy is verified to be contained,
byte for byte, at the start of the first (line numbers stripped), the engine's scans skip it and
every secret found in the first is mapped into it at the same line and column: half the bytes of
a Read- or Bash-heavy transcript are scanned once instead of twice, and nothing is lost.

String ends are found by the key that follows in Claude Code's key order; a quote is a string's
end only if an even number of backslashes precedes it. Anything unexpected (another key order,
an array content) simply means no skipping.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOOL_RESULT = b'"type":"tool_result","content":"'
_CONTENT_ENDS = (b'","is_error":', b'"}]')
_STDOUT = b'"toolUseResult":{"stdout":"'
_STDOUT_END = b'","stderr":'
_READ = b'"toolUseResult":{"type":"text","file":{"filePath":"'
_READ_CONTENT = b'","content":"'
_READ_END = b'","numLines":'
_NUMBER = re.compile(rb" {0,8}[0-9]{1,9}(?:\xe2\x86\x92|\\u2192)")  # `     5→` at a line start
_NUMBERS = re.compile(rb"\\n {0,8}[0-9]{1,9}(?:\xe2\x86\x92|\\u2192)")
_NEWLINE = b"\\n"  # a newline inside a JSON string
_RESULT_WINDOW = 4096


@dataclass(frozen=True)
class Copy:
    """`toolUseResult`'s string [start, end) repeats the tool_result content [source, source_end)."""

    start: int
    end: int
    source: int
    source_end: int
    numbered: bool

    def translate(self, data: bytes, start: int, end: int) -> tuple[int, int] | None:
        """The copy's span for the content span [start, end), or None if it lies outside the copy."""
        first, last = self._position(data, start), self._position(data, end)
        if first is None or last is None or last <= first:
            return None
        return first, last

    def _position(self, data: bytes, pos: int) -> int | None:
        if not self.numbered:
            mapped = self.start + pos - self.source
            return mapped if mapped <= self.end else None
        line = data.count(_NEWLINE, self.source, pos)
        line_start = data.rfind(_NEWLINE, self.source, pos)
        line_start = self.source if line_start < 0 else line_start + len(_NEWLINE)
        number = _NUMBER.match(data, line_start, pos)
        column = pos - (number.end() if number else line_start)
        if column < 0:
            column = 0
        at = self.start
        for _ in range(line):
            at = data.find(_NEWLINE, at, self.end)
            if at < 0:
                return None
            at += len(_NEWLINE)
        mapped = at + column
        return mapped if mapped <= self.end else None


def duplicate_copies(data: bytes) -> list[Copy]:
    """Every `toolUseResult` string that repeats (a prefix of) its line's tool_result content."""
    copies: list[Copy] = []
    start = data.find(_TOOL_RESULT)
    while start >= 0:
        line_end = data.find(b"\n", start)
        line_end = len(data) if line_end < 0 else line_end
        found = _copy_in_line(data, start + len(_TOOL_RESULT), line_end)
        if found is not None:
            copies.append(found)
        start = data.find(_TOOL_RESULT, line_end)
    return copies


def _string_end(data: bytes, start: int, stop: int, terminators: tuple[bytes, ...]) -> int:
    """The first terminator after `start` whose opening quote is not escaped, or -1."""
    best = -1
    for terminator in terminators:
        limit = stop if best < 0 else best + len(terminator)  # only an earlier one counts
        at = data.find(terminator, start, limit)
        while at >= 0 and _escaped(data, at, start):
            at = data.find(terminator, at + 1, limit)
        if at >= 0 and (best < 0 or at < best):
            best = at
    return best


def _escaped(data: bytes, quote: int, floor: int) -> bool:
    slashes = 0
    while quote - slashes - 1 >= floor and data[quote - slashes - 1] == 0x5C:
        slashes += 1
    return slashes % 2 == 1


def _copy_in_line(data: bytes, source: int, line_end: int) -> Copy | None:
    source_end = _string_end(data, source, line_end, _CONTENT_ENDS)
    if source_end < 0:
        return None
    near = min(line_end, source_end + _RESULT_WINDOW)  # toolUseResult follows a few envelope keys later
    stdout = data.find(_STDOUT, source_end, near)
    if stdout >= 0:
        start = stdout + len(_STDOUT)
        end = _string_end(data, start, line_end, (_STDOUT_END,))
        if end < 0 or not data.startswith(data[start:end], source, source_end):
            return None
        return Copy(start, end, source, source_end, numbered=False)
    read = data.find(_READ, source_end, near)
    if read < 0:
        return None
    start = data.find(_READ_CONTENT, read + len(_READ), line_end)
    if start < 0:
        return None
    start += len(_READ_CONTENT)
    end = _string_end(data, start, line_end, (_READ_END,))
    if end < 0 or end == start:
        return None
    first = _NUMBER.match(data, source, source_end)
    if first is None:
        same = data.startswith(data[start:end], source, source_end)
    else:
        same = _NUMBERS.sub(lambda _: _NEWLINE, data[first.end() : source_end]).startswith(data[start:end])
    return Copy(start, end, source, source_end, numbered=first is not None) if same else None

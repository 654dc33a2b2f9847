"""Equivalent encodings of a secret: match on the decoded form, redact the original bytes.

A secret reaches a transcript escaped as often as plain: a JSON document printed by a tool holds
`\\u0041` escapes and `\\/` slashes (a Slack webhook in `gh api` output), an HTML page holds
`&amp;`, a URL holds `%40` in its password. A line holding any of them is decoded once more,
with a map from each decoded byte back to the bytes it came from, so a span found in the decoded
line redacts exactly the original bytes it covers. Only characters that cannot change the JSON
structure of the line are decoded (never a quote, a backslash or a control character). Only a
window around each escape is decoded and searched; bytes without an escape nearby are not.
"""

from __future__ import annotations

import base64
import binascii
import re
from bisect import bisect_right

from .search import matches

_WINDOW = 512  # bytes decoded on each side of an escape (a token and the name before it)
# \u00XX (JSON; one or two backslashes: a JSON text inside a JSON string), \/ (JSON's escaped
# solidus), HTML character references, %XX (URL percent-encoding); and a line folded by a backslash before its
# newline (a YAML double-quoted scalar, a shell continuation: `"glpat-…\\` + newline + `  …"`), which
# YAML reads as one line without the next line's indentation (in JSONL: `\\\\\\n` and the spaces;
# in a Read result the next line's number `     4→`; in a structuredPatch hunk the next string `","+`)
_ESCAPE = re.compile(
    rb"\\{1,2}u00([2-7][0-9a-fA-F])|\\{1,2}/|&(amp|lt|gt|apos|#[0-9]{2,3}|#[xX][0-9a-fA-F]{2});|%([2-7][0-9a-fA-F])"
    rb"|(\\\\\\n(?: {0,8}[0-9]{1,9}(?:\xe2\x86\x92|\\u2192))?[ \t]{0,64}"
    rb'|\\\\","\+[ \t]{0,64})'
)
_SPECIAL = re.compile(rb'[\\"]')
_ENTITIES = {b"amp": b"&", b"lt": b"<", b"gt": b">", b"apos": b"'"}
_UNSAFE = frozenset(b'"\\\x7f')


class Decoded:
    """Bytes decoded once, and the way back: `origin(start, end)` is where a decoded range came from.

    The map is sparse: after each escape the offset between decoded and original bytes grows.
    """

    def __init__(self, line: bytes, *, escape: bool = False) -> None:
        """`escape`: the other way round, plain text JSON-escaped (`\\` and `"` get a backslash),
        so the rules, written for JSONL, read `pa\\"ss` in a plain file as one value."""
        pieces: list[bytes] = []
        self._points: list[int] = [0]  # decoded index from which `_shifts` applies
        self._shifts: list[int] = [0]  # original index minus decoded index
        done = size = 0
        for match in (_SPECIAL if escape else _ESCAPE).finditer(line):
            char = b"\\" + match.group() if escape else _decode(match)
            if char is None:
                continue
            pieces += (line[done : match.start()], char)
            size += match.start() - done + len(char)
            self._points.append(size)
            self._shifts.append(match.end() - size)
            done = match.end()
        pieces.append(line[done:])
        self.data = b"".join(pieces)
        self.changed = done > 0

    def origin(self, start: int, end: int) -> tuple[int, int]:
        """The original byte range of decoded bytes [start, end)."""
        return start + self._shift(start), end + self._shift(end)

    def _shift(self, index: int) -> int:
        return self._shifts[bisect_right(self._points, index) - 1]


def _decode(match: re.Match[bytes]) -> bytes | None:
    if match.group(4) is not None:
        return b""  # a folded line: both halves are one value
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


# One pass per leading byte (a single alternation starting with `\\`, `&` or `%` would test every
# byte with a class), each regex with the byte its matches start with: `\\u00XX` and `\\/` share one.
_Trigger = tuple[bytes, re.Pattern[bytes]]
_TRIGGERS: tuple[_Trigger, ...] = (
    # a fold only inside a token (`…n1yho\` + newline), not after code's `x = a + \`
    # (behind a class gate: a JSONL line holds a `\\n` or `\\"` every few dozen bytes)
    (b"\\", re.compile(rb'\\(?=[u/\\])(?:u00[2-7][0-9a-fA-F]|/|(?<=[A-Za-z0-9_+=-]\\)(?:\\\\n|\\","\+))')),
    (b"&", re.compile(rb"&(?:amp|lt|gt|apos|#[0-9]{2,3}|#[xX][0-9a-fA-F]{2});")),
    (b"%", re.compile(rb"%[2-7][0-9a-fA-F]")),
)


# in plain text (not JSONL): a quote escaped inside a value (`"pa\\"ss…"`)
_ESCAPED_QUOTE = re.compile(rb'(?<=[^\s\\])\\"')


def escaped_quote_windows(data: bytes) -> list[tuple[int, int]]:
    """Like encoded_windows, around each escaped quote of plain text (to be JSON-escaped)."""
    return encoded_windows(data, ((b"\\", _ESCAPED_QUOTE),))


def encoded_windows(data: bytes, triggers: tuple[_Trigger, ...] = _TRIGGERS) -> list[tuple[int, int]]:
    """Byte ranges around every escape worth decoding, merged, each inside one line: a secret
    holding an escape lies within _WINDOW bytes of it (longer lines cost no more than short ones)."""
    windows: list[tuple[int, int]] = []
    for first, trigger in triggers:
        for match in matches(trigger, first, data):
            line_start = data.rfind(b"\n", max(0, match.start() - _WINDOW), match.start()) + 1
            line_end = data.find(b"\n", match.end(), match.end() + _WINDOW)
            start = max(line_start, match.start() - _WINDOW)
            windows.append((start, min(match.end() + _WINDOW, len(data)) if line_end < 0 else line_end))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(windows):
        if merged and start <= merged[-1][1] and data.find(b"\n", merged[-1][1], start) < 0:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


# A base64 block that decodes to text (a whole `.env` in `ENV_B64=…`, `echo … | base64 -d`) is
# searched decoded. Looking for every base64 run would test every letter of a transcript, so only a
# value assigned to a name ending in `b64`/`base64` (any case), or piped into `base64 -d`, is looked
# at: both hold the literal `64`, and the gate after it (an assignment, a decode flag) is cheap.
_BASE64_NAMED = re.compile(
    rb"64(?<=[bBeE]64)(?:[A-Za-z0-9_]{0,32}(?:\\{0,8}[\"'])?[ \t]{0,4}[=:][ \t]{0,4}(?:\\{0,8}[\"'])?"
    rb"(?=[A-Za-z0-9+/]{32})|(?P<decode>[ \t]{1,4}(?:-d|--decode|-D)(?![A-Za-z0-9-])))"
)
_BASE64_RUN = re.compile(rb"(?:(?<![A-Za-z0-9+/\\])|(?<=\\[nrt]))[A-Za-z0-9+/]{32,8192}+={0,2}(?![A-Za-z0-9+/=])")
_PIPED = 8192 + 32  # how far before `base64 -d` its input may start
_PIPE_GAP = re.compile(rb"[ \t\\\"']{0,12}\|[ \t]{0,4}(?:base64|BASE64)")  # `blob" | base64`
_BASE64_BLOCKS = 64  # blocks decoded per buffer at most


# Any other name: a long base64 value right after `=` or `: ` (and a quote) that decodes to a
# config file (a line starting `NAME=` or `name: `) is a `.env` shipped whole, whatever its name.
# One scan per separator (a leading literal is found at memory speed; a class is tested per byte),
# `: ` with its blank (YAML; a bare `:` is everywhere in JSONL). The gate's first class holds the
# first base64 character of text starting with a letter, `_`, `#`, a blank or a newline.
_BASE64_ASSIGNED = tuple(
    re.compile(sep + rb"(?<=[A-Za-z0-9_\"']" + sep + rb")[ \t]{0,4}(?:\\{0,8}[\"'])?(?=[CIQ-Za-e][A-Za-z0-9+/]{47})")
    for sep in (b"=", b": ")
)
_CONFIG_LINE = re.compile(
    rb"(?:^|\n)[ \t]{0,8}(?:export[ \t]{1,4})?[A-Za-z_][A-Za-z0-9_.-]{0,127}[ \t]{0,4}(?:=|:[ \t])"
)


def base64_blocks(data: bytes) -> list[tuple[int, int, bytes]]:
    """(start, end, decoded text) of every base64 block assigned to a `…64` name or piped into
    `base64 -d` that decodes to text, and of every other assigned one that decodes to a config file."""
    blocks: list[tuple[int, int, bytes]] = []
    seen: set[int] = set()
    for hit in (hit for scan in _BASE64_ASSIGNED for hit in scan.finditer(data)):
        head = base64.b64decode(data[hit.end() : hit.end() + 4])  # most random tokens fail here
        run = _BASE64_RUN.match(data, hit.end()) if head.isascii() and head.decode().isprintable() else None
        text = None if run is None else base64_text(run.group())
        if run is not None and text is not None and _CONFIG_LINE.search(text):
            blocks.append((run.start(), run.end(), text))
            seen.add(run.start())
            if len(blocks) >= _BASE64_BLOCKS:
                return blocks
    for hit in _BASE64_NAMED.finditer(data):
        if hit.group("decode") is None:
            run = _BASE64_RUN.match(data, hit.end())
        else:
            pipe = data.rfind(b"|", max(0, hit.start() - 32), hit.start())
            runs = list(_BASE64_RUN.finditer(data, max(0, pipe - _PIPED), pipe)) if pipe > 0 else []
            # the last run before the pipe, if only quotes and spaces lie between
            run = runs[-1] if runs and _PIPE_GAP.match(data, runs[-1].end()) else None
        text = None if run is None or run.start() in seen else base64_text(run.group())
        if run is not None and text is not None:
            blocks.append((run.start(), run.end(), text))
            if len(blocks) >= _BASE64_BLOCKS:
                break
    return blocks


def base64_text(block: bytes) -> bytes | None:
    """The decoded block when it is printable UTF-8 text (lines of it), else None."""
    try:
        text = base64.b64decode(block + b"=" * (-len(block) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    if not text.replace("\n", "").replace("\r", "").replace("\t", "").isprintable():
        return None
    return text.encode()

"""Go RE2 patterns (gitleaks' catalogue) translated to Python `re` patterns that are safe to run here.

Used when the catalogue is built (tools/redaction_catalogue.py), never at run time. What differs:

- an inline flag group in the middle (`ab(?i)cd`) is global in Python and an error there: it becomes a
  scoped group to the end of the enclosing group (`ab(?i:cd)`);
- `\\z` is Python's `\\Z`; `[[:alnum:]]` and the other POSIX classes are spelled out; `\\x{41}` is `\\x41`
  (the catalogue runs on bytes, so a code point above 0x7f is refused);
- a repetition without an upper bound (`*`, `+`, `{n,}`) gets one (`CAP`): RE2 is linear whatever the
  pattern, Python's engine backtracks, and a bounded pattern on a bounded window costs a bounded time;
- the catalogue matches raw text, a transcript holds JSON-escaped text: a class that stops at a quote or
  at white space (`[\\x60'"\\s;]`) also stops at a backslash (`\\"`, `\\n`), so a value ends where its
  escaped quote starts.

`nesting(pattern)` is the product of the upper bounds of nested repetitions, the factor by which a
backtracking match can multiply its work at one position; the build refuses a rule where it is large.
"""

from __future__ import annotations

import re
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

from .rules import AFTER_ESCAPE

CAP = 1024  # upper bound given to an unbounded repetition (a match never spans more than a window)
NESTING_MAX = 1 << 16

_POSIX = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7f",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}
_FLAGS = re.compile(r"\(\?([imsU-]+)\)")
# `\nghp_…` in JSON: the `n` of an escape is no word character before the token, nor the last digit
# of `\u2192` (a Read line's arrow) or the `m` of a colour code
JSON_BOUNDARY = r"(?:\b|" + AFTER_ESCAPE + ")"
# gitleaks' end of a provider token (a quote, white space or `;`): in chat text and documents a token
# also ends at Markdown's and HTML's punctuation (`**tok**`, `(tok)`, `<td>tok</td>`, `[tok]`)
_TOKEN_END = "\\x60'\"\\s;"
_TOKEN_END_IN_TEXT = ")\\]}<>*,|&"
_BOUNDED = re.compile(r"\{(\d+)(,(\d*))?\}")


class TranslationError(ValueError):
    """A pattern that cannot be translated faithfully (a construct Python lacks)."""


def translate(pattern: str, *, json_text: bool = True) -> str:
    """The Python equivalent of an RE2 pattern (see the module docstring for what changes)."""
    out: list[str] = []
    closers: list[int] = [0]  # per open group: how many scoped-flag groups to close with it
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "\\" and pattern.startswith("b", i + 1) and json_text:
            piece, i = JSON_BOUNDARY, i + 2
        elif char == "\\":
            piece, i = _escape(pattern, i)
        elif char == "[":
            piece, i = _class(pattern, i, json_text)
        elif char == "(":
            piece, i = _open(pattern, i, out, closers)
        elif char == ")":
            piece, i = ")" * closers.pop() + ")", i + 1
        else:
            piece, i = _quantifier(pattern, i)
        out.append(piece)
    out.append(")" * closers.pop())
    if closers:
        raise TranslationError("unbalanced parentheses")
    return "".join(out)


def _open(pattern: str, i: int, out: list[str], closers: list[int]) -> tuple[str, int]:
    """A group's opening; an inline flag group after the start becomes a scoped one."""
    flags = _FLAGS.match(pattern, i)
    if flags is not None:
        if "U" in flags.group(1):
            raise TranslationError("ungreedy flag")
        if i == 0:
            return flags.group(0), flags.end()
        closers[-1] += 1  # closed with the enclosing group
        return f"(?{flags.group(1)}:", flags.end()
    closers.append(0)
    if pattern.startswith("(?P<", i):
        end = pattern.index(">", i) + 1
        return pattern[i:end], end
    scoped = re.match(r"\(\?[imsU-]*:", pattern[i:])
    if scoped is not None:
        return scoped.group(0), i + scoped.end()
    if pattern.startswith("(?", i):
        raise TranslationError(f"unsupported group {pattern[i : i + 4]!r}")
    return "(", i + 1


def _quantifier(pattern: str, i: int) -> tuple[str, int]:
    """An unbounded repetition gets CAP as its upper bound; anything else is copied."""
    char = pattern[i]
    if char in "*+":
        return f"{{{0 if char == '*' else 1},{CAP}}}", i + 1
    bound = _BOUNDED.match(pattern, i) if char == "{" else None
    if bound is None:
        return char, i + 1
    low, comma, high = bound.group(1), bound.group(2), bound.group(3)
    if comma and not high:
        return f"{{{low},{max(CAP, int(low))}}}", bound.end()
    return bound.group(0), bound.end()


def _escape(pattern: str, i: int) -> tuple[str, int]:
    nxt = pattern[i + 1 : i + 2]
    if nxt == "z":
        return "\\Z", i + 2
    if nxt == "x" and pattern.startswith("{", i + 2):
        end = pattern.index("}", i)
        code = int(pattern[i + 3 : end], 16)
        if code > 0x7F:
            raise TranslationError("a code point above ASCII in a bytes pattern")
        return f"\\x{code:02x}", end + 1
    if nxt in ("p", "P", "C", "Q", "E"):
        raise TranslationError(f"unsupported escape \\{nxt}")
    return pattern[i : i + 2], i + 2


def _class(pattern: str, i: int, json_text: bool) -> tuple[str, int]:
    """One bracket expression from `[`: POSIX classes spelled out; a quote or `\\s` adds a backslash."""
    if pattern.startswith("[[:", i) and (end := pattern.find(":]]", i)) > 0:
        name = pattern[i + 3 : end]
        negated = name.startswith("^")
        return ("[^" if negated else "[") + _POSIX[name.lstrip("^")] + "]", end + 3
    j = i + 1
    body: list[str] = []
    if pattern.startswith("^", j):
        body.append("^")
        j += 1
    if pattern.startswith("]", j):  # a leading `]` is a member
        body.append("\\]")
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        if pattern.startswith("[:", j):
            end = pattern.index(":]", j)
            body.append(_POSIX[pattern[j + 2 : end]])
            j = end + 2
        elif pattern[j] == "\\":
            piece, j = _escape(pattern, j)
            body.append(piece)
        elif pattern[j] == "[":
            body.append("\\[")
            j += 1
        else:
            body.append(pattern[j])
            j += 1
    if j >= len(pattern):
        raise TranslationError("unterminated class")
    text = "".join(body)
    return "[" + (_in_transcripts(text) if json_text else text) + "]", j + 1


def _in_transcripts(members: str) -> str:
    """A class's members as transcripts need them: gitleaks' token end also at Markdown's and HTML's
    punctuation; a class that stops at a quote or white space also at a backslash (`\\"`, `\\n`)."""
    if members == _TOKEN_END:
        members += _TOKEN_END_IN_TEXT
    if ('"' in members or "\\s" in members) and "\\\\" not in members:
        members += "\\\\"
    return members


def nesting(pattern: str) -> int:
    """The largest product of repetition upper bounds along one path of nested repetitions (1 when
    no repetition holds another: one bounded run costs its length, a nested one the product)."""
    product, depth = _nesting(sre_parse.parse(pattern))
    return product if depth >= 2 else 1


def _nesting(items: Any) -> tuple[int, int]:
    worst = (1, 0)
    for op, arg in items:
        name = str(op)
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            product, depth = _nesting(arg[2])
            worst = max(worst, (arg[1] * product, depth + 1))
        elif name == "SUBPATTERN":
            worst = max(worst, _nesting(arg[-1]))
        elif name == "BRANCH":
            worst = max([worst, *(_nesting(alt) for alt in arg[1])])
        elif name in ("ASSERT", "ASSERT_NOT"):
            worst = max(worst, _nesting(arg[1]))
    return worst

"""Replace secrets in transcript bytes by `[REDACTED:<kind>]` before anything leaves the machine.

The input is Claude Code JSONL: one compact JSON object per line, so the text a secret sits in is
a JSON string literal. Secrets are matched on the *escaped* line, so every rule stops at `"` and
`\\` (a secret next to `\\n`, `\\"` or `\\\\` ends exactly at the escape) and the replacement holds
neither: a redacted line stays valid JSON. A secret split across JSON strings (a private key in an
Edit result's `structuredPatch`, one string per line) is replaced string by string, so the hunk
keeps its lines. As a safety net, a changed line that no longer parses (say a custom rule ate a
quote) is redacted again string by string on its decoded JSON.

Every copy: once any copy of a value is recognised (the key in `toolUseResult.file.content`), every
other occurrence in the buffer is replaced too (the same key in the numbered `tool_result` text, in
`stdout`, in a later prompt), and each line of a multi-line secret counts as such a value.

Speed (target >= 50 MB/s on a loaded 2-core machine): the rules' anchors are merged into nine
scans, one per distinct leading literal (`_`, `-`, `.`, `A`, `:` on the raw bytes; `p`, `ke`,
`cre`, `auth` on the ASCII-lowercased bytes). Each scan is a regex starting with that literal
(sre finds those at memory speed) followed by cheap gates and a lookahead over what the anchors
need next, so a hit is rare; only at a hit does Python pick the candidate rules, and a rule's full
regex is tried only there, never over a whole line. A `toolUseResult` copy of the tool_result
content is not scanned at all (copies.py). Every regex is linear: bounded or possessive
quantifiers, no nested ambiguity. Bytes outside the replaced spans are copied through: untouched
lines stay byte-identical.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from operator import attrgetter
from typing import Any, TypeVar

from .copies import Copy, duplicate_copies
from .rules import FRAGMENTS, Rule
from .validators import looks_secret, shannon_entropy

_KIND_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_TOKEN_START = FRAGMENTS["START"]
_NEAR_BACK = 512  # how far before an anchor a `near` word may be
_PROPAGATE_MIN = 8  # shortest value whose other copies are redacted too
_FRAGMENT_MIN = 16  # shortest line of a multi-line secret treated the same way
_GLOBAL_COPIES = 8  # up to this many distinct values, copies are searched in the whole buffer
_GLOBAL_MIN = 12  # … if they are at least this long (and random enough)
_NEAR_LINES = 3  # otherwise in the value's line and this many lines before and after it
_NEAR_BYTES = 1 << 20  # … but never more than this far away
_STRING_BREAK = re.compile(rb'(\\{0,8}"[ \t]{0,4},[ \t]{0,4}\\{0,8}"[+ -]?)')
_FRAGMENT_SPLIT = re.compile(
    rb'\\[nr]|\\\\n|\r|\n|\\{0,8}"[ \t]{0,4},[ \t]{0,4}\\{0,8}"[+ -]?'  # line ends, patch strings
    rb"|(?:^|(?<=\\n))[ \t]{0,8}[0-9]{1,9}(?:\xe2\x86\x92|\\u2192|\\t)"  # Read line numbers: `     5→`
)
_PEM_LINE = re.compile(rb"-----(?:BEGIN|END)|^[A-Za-z-]{1,40}:")
_ALNUM = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


@dataclass
class RedactionResult:
    """Redacted bytes, how many secrets of each kind, and which 0-based lines changed.

    `changed_lines` lets `fork` drop the thinking blocks of changed lines: their signatures no
    longer verify.
    """

    data: bytes
    counts: dict[str, int]
    changed_lines: list[int]

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True)
class _Compiled:
    index: int
    rule: Rule
    text: re.Pattern[str]  # for redact_text's textual rules and decoded lines
    raw: re.Pattern[bytes] | None  # for the anchored bytes path; None: searched on decoded text
    lead: bytes
    replacement: bytes
    name: re.Pattern[str] | None = None  # the `name` group must fullmatch this

    def names(self, match: re.Match[Any]) -> bool:
        """The match's `name` group names a secret (always true for rules without a name check)."""
        if self.name is None:
            return True
        name = match.group("name")
        if isinstance(name, bytes):
            name = name.decode("utf-8", "surrogateescape")
        return name is not None and self.name.fullmatch(name) is not None

    def accepts(self, match: re.Match[Any], secret: str) -> bool:
        """The rule's name check (when it has one) and validator both pass."""
        return self.names(match) and _accept(self.rule, secret)


@dataclass(frozen=True)
class _Anchor:
    rule: int  # index into Redactor._rules
    head: bytes  # exact bytes before the scanned literal (provider prefixes), compared on the haystack
    rest: re.Pattern[bytes] | None  # what must follow the group's literal
    near: tuple[bytes, ...]
    context: bool  # a context word: marks lines for the rule instead of a match position
    boundary: bool = False  # the literal starts a token: not preceded by a token character


@dataclass
class _Group:
    """One scan: a literal and the anchors that start with it."""

    key: bytes
    lowered: bool
    literals: list[tuple[str, str, _Anchor | None]] = field(default_factory=list)  # (literal, rest, proto)
    free: list[_Anchor] = field(default_factory=list)
    by_head: dict[int, dict[bytes, list[_Anchor]]] = field(default_factory=dict)
    scan: re.Pattern[bytes] | None = None


@dataclass(frozen=True, order=True)
class _Span:
    start: int
    end: int
    kind: str


_Buf = TypeVar("_Buf", bytes, str)
_Edit = tuple[int, int, int, _Buf]  # (0-based line number, start, end, replacement line)


class Redactor:
    """Applies an ordered rule set: specific token formats first, generic assignments last."""

    def __init__(
        self, rules: Iterable[Rule] | None = None, *, disabled: Iterable[str] = (), extra: Iterable[Rule] = ()
    ) -> None:
        from . import DEFAULT_RULES

        off = set(disabled)
        chosen = [r for r in (DEFAULT_RULES if rules is None else tuple(rules)) if r.kind not in off]
        # Extra rules run before the keyword catch-alls so that they claim their own kind.
        catch_all = [r for r in chosen if r.kind in ("generic_secret", "password")]
        ordered = [r for r in chosen if r.kind not in ("generic_secret", "password")] + list(extra) + catch_all
        self._rules = tuple(_compile(i, rule) for i, rule in enumerate(ordered))
        self._textual = tuple(c for c in self._rules if c.raw is None)
        self._groups = _build_groups(self._rules)
        self._self_anchored = tuple(c for c in self._rules if c.raw is not None and _is_self_anchored(c.rule))
        self._context_rules = tuple(c for c in self._rules if c.rule.context)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.rule.kind for c in self._rules))

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any]) -> Redactor:
        """Build from the `redaction` config section: {"disabled": [kinds], "extra": [rules]}.

        An extra rule is {"kind", "pattern", optional "group", optional "min_entropy"}. Unknown
        kinds in `disabled` are ignored (a config written for a newer client must not stop
        capture); a bad pattern raises ValueError naming the rule.
        """
        disabled = cfg.get("disabled") or ()
        if isinstance(disabled, str) or not all(isinstance(k, str) for k in disabled):
            raise ValueError("redaction config: 'disabled' must be a list of rule kinds")
        extra = [_rule_from_mapping(i, spec) for i, spec in enumerate(cfg.get("extra") or ())]
        return cls(disabled=disabled, extra=extra)

    # --- public API ----------------------------------------------------------------------------

    def redact_bytes(self, data: bytes) -> RedactionResult:
        """Redact JSONL bytes; lines without a secret are copied through byte-identical."""
        counts: dict[str, int] = {}
        edits = self._anchored_edits(data, counts, jsonl=True)
        data = _splice(data, edits)
        changed = {number for number, *_ in edits}
        if self._textual:
            data, numbers = self._redact_textual(data, counts)
            changed.update(numbers)
        return RedactionResult(data, counts, sorted(changed))

    def redact_plain(self, data: bytes) -> RedactionResult:
        """Redact plain text bytes (a tool output saved to a file, a log): secrets may span lines.

        `changed_lines` are the 0-based lines of the input that held (part of) a secret.
        """
        counts: dict[str, int] = {}
        spans = self._find_spans(data, jsonl=False)
        changed: set[int] = set()
        for span in spans:
            first = data.count(b"\n", 0, span.start)
            changed.update(range(first, first + data.count(b"\n", span.start, span.end) + 1))
        data = _apply(data, spans, counts)
        if self._textual:
            text, numbers = self._redact_textual_plain(data.decode("utf-8", "surrogateescape"), counts)
            data = text.encode("utf-8", "surrogateescape")
            changed.update(numbers)
        return RedactionResult(data, counts, sorted(changed))

    def redact_text(self, text: str) -> tuple[str, dict[str, int]]:
        """Redact one text (any text, not only JSONL) with every rule; returns (text, counts)."""
        counts: dict[str, int] = {}
        data = text.encode("utf-8", "surrogateescape")
        new = _apply(data, self._find_spans(data, jsonl=False), counts)
        if new is not data:
            text = new.decode("utf-8", "surrogateescape")
        for compiled in self._textual:
            text = _sub(compiled, text, counts)
        return text, counts

    def _redact_textual_plain(self, text: str, counts: dict[str, int]) -> tuple[str, list[int]]:
        changed: list[int] = []
        lines = text.split("\n")
        for i, line in enumerate(lines):
            new = line
            for compiled in self._textual:
                new = _sub(compiled, new, counts)
            if new != line:
                lines[i] = new
                changed.append(i)
        return "\n".join(lines), changed

    # --- finding spans -------------------------------------------------------------------------

    def _find_spans(self, data: bytes, *, jsonl: bool) -> list[_Span]:
        """Every secret span, earlier rules winning where two overlap, then every other copy.

        In JSONL, a `toolUseResult` string that repeats its line's tool_result content is not
        scanned (copies.py): what is found in the content is mapped into it.
        """
        duplicates = duplicate_copies(data) if jsonl else []
        compact = _Compact(data, duplicates)
        candidates, context_lines = self._scan(_Haystack(compact.data))
        candidates = {rule: compact.original(positions) for rule, positions in candidates.items()}
        context_lines = {rule: compact.original(positions) for rule, positions in context_lines.items()}
        accepted: list[_Span] = []
        for compiled in self._rules:
            if compiled.raw is None:
                continue
            positions = candidates.get(compiled.index)
            if positions:
                _accept_all(accepted, self._rule_spans(compiled, data, sorted(set(positions)), jsonl))
            lines = context_lines.get(compiled.index)
            if lines:
                _accept_all(accepted, self._context_spans(compiled, data, lines))
        for compiled in self._self_anchored:
            positions = [m.start() for m in compiled.raw.finditer(data)]  # type: ignore[union-attr]
            _accept_all(accepted, self._rule_spans(compiled, data, positions, jsonl))
        if accepted and duplicates:
            _accept_all(accepted, _into_duplicates(data, accepted, duplicates))
        if accepted:
            _accept_all(accepted, self._copies(data, accepted))
        return accepted

    def _scan(self, hay: _Haystack) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
        """Run every group's scan; (rule → candidate start positions, rule → context line starts)."""
        candidates: dict[int, list[int]] = {}
        context: dict[int, list[int]] = {}
        for group in self._groups:
            buf = hay.lower if group.lowered else hay.data
            assert group.scan is not None
            width = len(group.key)
            headed = group.by_head.items()
            for match in group.scan.finditer(buf):
                pos = match.start()
                anchors = group.free
                if headed:
                    anchors = [*anchors, *(a for w, h in headed if pos >= w for a in h.get(buf[pos - w : pos], ()))]
                for anchor in anchors:
                    if anchor.rest is not None and anchor.rest.match(buf, pos + width) is None:
                        continue
                    if anchor.near and not _near(hay.lower, pos, anchor.near):
                        continue
                    if anchor.context:
                        context.setdefault(anchor.rule, []).append(pos)
                    else:
                        candidates.setdefault(anchor.rule, []).append(pos - len(anchor.head))
        return candidates, context

    def _rule_spans(self, compiled: _Compiled, data: bytes, positions: list[int], jsonl: bool) -> list[_Span]:
        """Matches of one rule at its candidate positions, left to right, never overlapping."""
        spans: list[_Span] = []
        consumed = 0
        line_end = -1
        rule = compiled.rule
        for pos in positions:
            if pos < consumed:
                continue
            if not jsonl:
                line_end = len(data)
            elif pos > line_end:  # positions ascend: one search per line, not per candidate
                line_end = data.find(b"\n", pos)
                line_end = len(data) if line_end < 0 else line_end
            match = _match_at(compiled, data, pos, consumed, line_end)
            if match is None:
                continue
            consumed = max(match.end(), match.start() + 1)
            span = _group_span(match, rule.group)
            if span is not None and compiled.accepts(match, data[span[0] : span[1]].decode("utf-8", "surrogateescape")):
                spans.append(_Span(span[0], span[1], rule.kind))
        return spans

    def _context_spans(self, compiled: _Compiled, data: bytes, hits: list[int]) -> list[_Span]:
        """A context rule runs over the line of each context word and the `window` lines after it."""
        spans: list[_Span] = []
        done = 0
        assert compiled.raw is not None
        for pos in sorted(hits):
            start = max(done, data.rfind(b"\n", 0, pos) + 1)
            end = pos
            for _ in range(compiled.rule.window + 1):
                end = data.find(b"\n", end + 1)
                if end < 0:
                    end = len(data)
                    break
            if start >= end:
                continue
            for match in compiled.raw.finditer(data, start, end):
                span = _group_span(match, compiled.rule.group)
                if span and compiled.accepts(match, data[span[0] : span[1]].decode("utf-8", "surrogateescape")):
                    spans.append(_Span(span[0], span[1], compiled.rule.kind))
            done = end
        return spans

    def _copies(self, data: bytes, found: list[_Span]) -> list[_Span]:
        """Every other occurrence of a recognised value (and of each line of a multi-line one).

        With few distinct values (a session holds a handful of secrets) the whole buffer is
        searched; with many, each value is searched near where it was found: its line and the
        lines around it, where Claude Code repeats it (tool input, tool_result, toolUseResult).
        """
        multiline = {c.rule.kind for c in self._rules if c.rule.multiline}
        values: dict[bytes, tuple[str, int]] = {}
        for span in found:
            value = data[span.start : span.end]
            if span.kind in multiline:
                for fragment in _FRAGMENT_SPLIT.split(value):
                    fragment = fragment.strip(b" \t")
                    if len(fragment) >= _FRAGMENT_MIN and not _PEM_LINE.search(fragment):
                        values.setdefault(fragment, (span.kind, span.start))
            elif len(value) >= _PROPAGATE_MIN:
                values.setdefault(value, (span.kind, span.start))
        everywhere = len(values) <= _GLOBAL_COPIES
        copies: list[_Span] = []
        for value, (kind, at) in values.items():
            # a short or low-entropy value is only looked for near where it was found: a false
            # positive like `password2` must not spread through a whole file
            distinctive = len(value) >= _GLOBAL_MIN and shannon_entropy(value.decode("utf-8", "replace")) >= 3.2
            lo, hi = (0, len(data)) if everywhere and distinctive else _neighbourhood(data, at)
            start = data.find(value, lo, hi)
            while start >= 0:
                end = start + len(value)
                if _bounded(data, start, end, value):
                    copies.append(_Span(start, end, kind))
                start = data.find(value, end, hi)
        return sorted(copies)

    # --- JSONL rewriting -----------------------------------------------------------------------

    def _anchored_edits(self, data: bytes, counts: dict[str, int], *, jsonl: bool) -> list[_Edit[bytes]]:
        """(line number, start, end, new line) for every line holding an accepted secret."""
        edits: list[_Edit[bytes]] = []
        number, counted_to = 0, 0
        for start, end, spans in _group_by_line(data, self._find_spans(data, jsonl=jsonl)):
            number += data.count(b"\n", counted_to, start)
            counted_to = start
            relative = [(s.start - start, s.end - start, s.kind) for s in spans]
            new = self._rewrite_line(data[start:end], relative, counts)
            if new is not None:
                edits.append((number, start, end, new))
        return edits

    def _rewrite_line(self, line: bytes, spans: list[tuple[int, int, str]], counts: dict[str, int]) -> bytes | None:
        pieces: list[Any] = []
        done = 0
        for start, end, kind in spans:
            pieces += (line[done:start], _replacement(line[start:end], kind))
            done = end
        new = b"".join(pieces) + line[done:]
        if not _still_json(line, new):
            return self._redact_decoded(line, counts)
        for _, _, kind in spans:
            counts[kind] = counts.get(kind, 0) + 1
        return new

    # --- decoded-text path (custom rules whose patterns mean something else on bytes) ----------

    def _redact_textual(self, data: bytes, counts: dict[str, int]) -> tuple[bytes, list[int]]:
        """Run the rules that need decoded text, on the lines where they match."""
        text = data.decode("utf-8", "surrogateescape")
        hits = sorted(_Span(m.start(), m.end(), "") for c in self._textual for m in c.text.finditer(text))
        edits: list[_Edit[str]] = []
        number, counted_to = 0, 0
        for start, end, _ in _group_by_line(text, hits):
            number += text.count("\n", counted_to, start)
            counted_to = start
            new = self._rewrite_text_line(text[start:end], counts)
            if new is not None:
                edits.append((number, start, end, new))
        if not edits:
            return data, []
        return _splice(text, edits).encode("utf-8", "surrogateescape"), [number for number, *_ in edits]

    def _rewrite_text_line(self, line: str, counts: dict[str, int]) -> str | None:
        local: dict[str, int] = {}
        new = line
        for compiled in self._textual:
            new = _sub(compiled, new, local)
        if new == line:
            return None
        before, after = line.encode("utf-8", "surrogateescape"), new.encode("utf-8", "surrogateescape")
        if _still_json(before, after):
            _merge(counts, local)
            return new
        fixed = self._redact_decoded(before, counts)
        return None if fixed is None else fixed.decode("utf-8", "surrogateescape")

    # --- safety net ----------------------------------------------------------------------------

    def _redact_decoded(self, line: bytes, counts: dict[str, int]) -> bytes | None:
        """Redact each decoded string of a JSON line and re-serialise it compactly.

        Used when redacting the escaped text broke the JSON (e.g. a custom rule consumed a quote,
        or a generic rule replaced a bare number): the decoded strings carry no escapes.
        """
        local: dict[str, int] = {}
        body = line.rstrip(b"\r")
        obj = _map_strings(json.loads(body), lambda s: self._redact_string(s, local))
        if not local:
            return None
        _merge(counts, local)
        return _dump(obj) + line[len(body) :]

    def _redact_string(self, value: str, counts: dict[str, int]) -> str:
        new, local = self.redact_text(value)
        _merge(counts, local)
        return new


# --- building the scans --------------------------------------------------------------------------


class _Compact:
    """`data` without the duplicate copies, for the scans, and the way back to `data` offsets."""

    def __init__(self, data: bytes, duplicates: list[Copy]) -> None:
        self._starts: list[int] = [0]  # compact offset where each kept piece starts
        self._shifts: list[int] = [0]  # what to add to a compact offset inside that piece
        if not duplicates:
            self.data = data
            return
        pieces, done, removed = [], 0, 0
        for copy in duplicates:
            pieces.append(data[done : copy.start])
            removed += copy.end - copy.start
            self._starts.append(copy.end - removed)  # the next piece starts where this copy ended
            self._shifts.append(removed)
            done = copy.end
        pieces.append(data[done:])
        self.data = b"".join(pieces)

    def original(self, positions: list[int]) -> list[int]:
        if len(self._starts) == 1:
            return positions
        return [p + self._shifts[bisect.bisect_right(self._starts, p) - 1] for p in positions]


def _into_duplicates(data: bytes, spans: list[_Span], duplicates: list[Copy]) -> list[_Span]:
    """The spans found in a tool_result content, mapped into its skipped toolUseResult copy: at the
    same line and column (a numbered span drops its line numbers), or else wherever its value is."""
    out: list[_Span] = []
    i = 0
    for copy in duplicates:  # both sorted by position
        while i < len(spans) and spans[i].end <= copy.source:
            i += 1
        j = i
        while j < len(spans) and spans[j].start < copy.source_end:
            span = spans[j]
            value = data[span.start : span.end]
            mapped = copy.translate(data, span.start, span.end)
            if mapped is not None and (copy.numbered or data[mapped[0] : mapped[1]] == value):
                out.append(_Span(mapped[0], mapped[1], span.kind))
            else:
                at = data.find(value, copy.start, copy.end)
                while at >= 0:
                    out.append(_Span(at, at + len(value), span.kind))
                    at = data.find(value, at + len(value), copy.end)
            j += 1
    return out


class _Haystack:
    """The raw bytes and, made once when first needed, their ASCII-lowercased copy."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._lower: bytes | None = None

    @property
    def lower(self) -> bytes:
        if self._lower is None:
            self._lower = self.data.lower()  # ASCII-only, so offsets are unchanged
        return self._lower


def _build_groups(rules: tuple[_Compiled, ...]) -> tuple[_Group, ...]:
    """Merge every rule's anchors into groups by leading literal; compile one scan per group."""
    groups: dict[tuple[str, bool], _Group] = {}
    for compiled in rules:
        if compiled.raw is None:
            continue
        rule = compiled.rule
        near = tuple(w.encode() for w in rule.near)
        for lowered, regexes in ((False, rule.anchors), (True, rule.lower_anchors)):
            for regex in regexes:
                _add_literal(groups, regex, lowered, _Anchor(compiled.index, b"", None, near, False))
        for word in rule.context:
            _add_literal(groups, re.escape(word), True, _Anchor(compiled.index, b"", None, (), True))
    keys = {k: _common_prefix([lit for lit, _, _ in g.literals]) for k, g in groups.items()}
    for compiled in rules:
        if compiled.raw is None:
            continue
        for prefix in compiled.rule.prefixes:
            _add_prefix(groups, keys, compiled, prefix)
    for group in groups.values():
        _compile_group(group)
    return tuple(groups.values())


def _add_literal(groups: dict[tuple[str, bool], _Group], regex: str, lowered: bool, proto: _Anchor) -> None:
    literal, rest = _literal_prefix(regex)
    if not literal:
        raise ValueError(f"anchor {regex!r} must start with a literal")
    group = groups.setdefault((literal[0], lowered), _Group(b"", lowered))
    group.literals.append((literal, rest, proto))


def _add_prefix(
    groups: dict[tuple[str, bool], _Group], keys: dict[tuple[str, bool], str], compiled: _Compiled, prefix: str
) -> None:
    """Anchor a provider prefix on the cheapest scan: a separator, `A`, an existing lowercase scan,
    or (last resort) the prefix itself."""
    follow = compiled.rule.follow
    for i, char in enumerate(prefix):
        if char in "_-.~":
            return _add_pivot(groups, compiled, prefix, i, char, False, follow)
    if "A" in prefix:
        return _add_pivot(groups, compiled, prefix, prefix.index("A"), "A", False, follow)
    lower = prefix.lower()
    for (_first, lowered), key in keys.items():
        if lowered and key in lower:
            return _add_pivot(groups, compiled, prefix, lower.index(key), key, True, follow)
    return _add_pivot(groups, compiled, prefix, 0, prefix, False, follow)


def _add_pivot(
    groups: dict[tuple[str, bool], _Group],
    compiled: _Compiled,
    prefix: str,
    at: int,
    key: str,
    lowered: bool,
    follow: str,
) -> None:
    head = prefix[:at]
    tail = prefix[at + len(key) :]
    rest = re.escape(tail.lower() if lowered else tail)
    if len(tail) < 2 and follow:  # a longer literal tail is selective enough on its own
        rest += f"(?i:{follow})" if lowered else follow
    boundary = not head and compiled.rule.pattern.startswith(_TOKEN_START)
    anchor = _Anchor(compiled.index, (head.lower() if lowered else head).encode(), None, (), False, boundary)
    group = groups.setdefault((key[0], lowered), _Group(b"", lowered))
    group.literals.append((key, rest, anchor))


def _compile_group(group: _Group) -> None:
    """One regex per group: the literal, then either a head just before it (checked with cheap
    lookbehinds: a class per character, then the exact suffixes) followed by one of the headed
    anchors' rests, or one of the other anchors' rests (behind a one-character class gate)."""
    key = _common_prefix([lit for lit, _, _ in group.literals])
    group.key = key.encode()
    headed: dict[str, set[str]] = {}  # rest -> heads
    free: list[str] = []
    bounded: list[str] = []  # rests of token prefixes that must start a token (`AKIA`, not `…AAAAKIA`)
    for literal, rest, proto in group.literals:
        assert proto is not None
        full = re.escape(literal[len(key) :]) + rest
        anchor = _Anchor(proto.rule, proto.head, re.compile(full.encode()) if full else None, proto.near, proto.context)
        if anchor.head:
            group.by_head.setdefault(len(anchor.head), {}).setdefault(anchor.head, []).append(anchor)
            headed.setdefault(full, set()).add(proto.head.decode())
        else:
            group.free.append(anchor)
            (bounded if proto.boundary and full else free).append(full)
    group.free = _merge_by_rule(group.free)
    branches = []
    if headed:
        suffixes = sorted({h for heads in headed.values() for h in heads})
        branches.append(_behind(suffixes, key) + _ahead(_flatten(list(headed))))
    if bounded:
        k = re.escape(key)
        start = rf"(?:(?<![A-Za-z0-9_+/-]{k})|(?<=\\[nrtbf]{k})|(?<=\\u[0-9a-fA-F]{{4}}{k})|(?<=[0-9]m{k}))"
        branches.append(start + _ahead(_flatten(bounded)))
    if free:
        branches.append(_ahead(_flatten(free)))
    look = "" if "" in free else "(?:" + "|".join(branches) + ")"
    group.scan = re.compile(re.escape(key).encode() + look.encode())


def _merge_by_rule(anchors: list[_Anchor]) -> list[_Anchor]:
    """One anchor per (rule, near, context): their rests joined, so a hit tests each rule once."""
    merged: dict[tuple[int, tuple[bytes, ...], bool], list[_Anchor]] = {}
    for anchor in anchors:
        merged.setdefault((anchor.rule, anchor.near, anchor.context), []).append(anchor)
    out = []
    for (rule, near, context), same in merged.items():
        if any(a.rest is None for a in same):
            rest = None
        else:
            rests = list(dict.fromkeys(a.rest.pattern for a in same if a.rest is not None))
            rest = re.compile(rests[0] if len(rests) == 1 else b"|".join(b"(?:" + r + b")" for r in rests))
        out.append(_Anchor(rule, b"", rest, near, context))
    return out


def _behind(heads: list[str], key: str) -> str:
    """Lookbehinds for `head + key`, checking the head's last one or two characters: a class per
    character first (cheap: most `_` of a source file fail it), then the exact suffixes."""
    tail = re.escape(key)
    suffixes = sorted({h[-2:] for h in heads})
    parts = []
    for width in (2, 1):
        chosen = [s for s in suffixes if len(s) == width]
        if not chosen:
            continue
        gate = "".join("[" + "".join(re.escape(c) for c in sorted({s[i] for s in chosen})) + "]" for i in range(width))
        exact = "|".join(re.escape(s) for s in chosen)
        parts.append(f"(?<={gate}{tail})(?<=(?:{exact}){tail})")
    return "(?:" + "|".join(parts) + ")"


def _flatten(rests: list[str]) -> list[str]:
    """Alternatives of the rests, a rest `(?:a|b)` split into `a` and `b`, duplicates dropped."""
    out: list[str] = []
    for rest in rests:
        if rest.startswith("(?:") and _closing_paren(rest, 0) == len(rest) - 1:
            out.extend(_flatten(_split_alternatives(rest[3:-1])))
        else:
            out.append(rest)
    return list(dict.fromkeys(out))


def _ahead(rests: list[str]) -> str:
    """A lookahead for any of `rests`, behind a one-character class when their first characters are known."""
    if "" in rests:
        return ""
    firsts: set[str] = set()
    for rest in rests:
        chars = _first_chars(rest)
        if chars is None:
            firsts = set()
            break
        firsts |= chars
    gate = "(?=[" + "".join(re.escape(c) for c in sorted(firsts)) + "])" if firsts else ""
    return gate + "(?=" + "|".join(f"(?:{r})" for r in rests) + ")"


def _first_chars(regex: str) -> set[str] | None:
    """The characters a match of `regex` can start with, or None when that is not simple to tell.

    Used to put a one-character class in front of a scan's lookahead alternation: most hits of a
    common literal (`p`, `-`, `_`) then fail on one class test instead of on every alternative.
    """
    if not regex:
        return None
    if regex.startswith(("(?<=", "(?<!")):  # zero width: what follows it comes first
        close = _closing_paren(regex, 0)
        return None if close is None else _first_chars(regex[close + 1 :])
    if regex.startswith(("(?:", "(?=")):
        return _group_first_chars(regex)
    if regex.startswith("["):
        return _class_first_chars(regex)
    literal, _ = _literal_prefix(regex)
    if literal:
        return {literal[0]}
    if len(regex) >= 2 and regex[1] in "?*" and regex[0] not in "\\.[(":
        found = _first_chars(regex[2:])
        return None if found is None else found | {regex[0]}
    return None


def _group_first_chars(regex: str) -> set[str] | None:
    close = _closing_paren(regex, 0)
    if close is None:
        return None
    inner, after = regex[3:close], regex[close + 1 :]
    if regex.startswith("(?="):
        return _first_chars(inner)
    optional = after[:1] in ("?", "*") or after.startswith("{0")
    if optional:
        after = after[1:] if after[:1] in "?*" else after[after.index("}") + 1 :]
    chars: set[str] = set()
    for alternative in [*_split_alternatives(inner), *([""] if optional else [])]:
        found = _first_chars(alternative + after)
        if found is None:
            return None
        chars |= found
    return chars


def _class_first_chars(regex: str) -> set[str] | None:
    chars = _class_chars(regex)
    end = regex.find("]", 2) + 1
    quantifier = regex[end : end + 2]
    if chars is not None and (quantifier[:1] in ("?", "*") or quantifier == "{0"):
        after = regex[end + 1 :] if quantifier[:1] in "?*" else regex[regex.index("}", end) + 1 :]
        found = _first_chars(after)
        return None if found is None else chars | found
    return chars


def _closing_paren(regex: str, start: int) -> int | None:
    depth, i = 0, start
    while i < len(regex):
        char = regex[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":
            end = regex.find("]", i + 2)
            if end < 0:
                return None
            i = end + 1
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def _split_alternatives(inner: str) -> list[str]:
    parts, depth, start, i = [], 0, 0, 0
    while i < len(inner):
        char = inner[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":
            end = inner.find("]", i + 2)
            i = (end if end >= 0 else len(inner)) + 1
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(inner[start:i])
            start = i + 1
        i += 1
    parts.append(inner[start:])
    return parts


def _class_chars(regex: str) -> set[str] | None:
    """The members of a leading positive class like `[A-Za-z0-9_-]`, or None."""
    end = regex.find("]", 2)
    body = regex[1:end]
    if end < 0 or body.startswith("^") or "\\" in body.replace("\\\\", "").replace("\\-", "").replace("\\.", ""):
        return None
    body = body.replace("\\-", "-").replace("\\.", ".").replace("\\\\", "\\")
    chars: set[str] = set()
    i = 0
    while i < len(body):
        if i + 2 < len(body) and body[i + 1] == "-":
            chars.update(chr(c) for c in range(ord(body[i]), ord(body[i + 2]) + 1))
            i += 3
        else:
            chars.add(body[i])
            i += 1
    return chars


def _literal_prefix(regex: str) -> tuple[str, str]:
    """(literal, rest): the literal characters a regex starts with, and the remaining regex."""
    out: list[str] = []
    i = 0
    while i < len(regex):
        char = regex[i]
        if char == "\\":
            if i + 1 >= len(regex) or regex[i + 1].isalnum():
                break  # \d, \s, \n …: a class, not a literal
            literal, step = regex[i + 1], 2
        elif char in ".^$*+?{}[]|()":
            break
        else:
            literal, step = char, 1
        following = regex[i + step : i + step + 1]
        if following and following in "*+?{":
            break
        out.append(literal)
        i += step
    return "".join(out), regex[i:]


def _common_prefix(words: list[str]) -> str:
    first, last = min(words), max(words)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]


def _is_self_anchored(rule: Rule) -> bool:
    return not (rule.prefixes or rule.anchors or rule.lower_anchors or rule.context)


# --- matching helpers ----------------------------------------------------------------------------


def _match_at(compiled: _Compiled, data: bytes, pos: int, floor: int, end: int) -> re.Match[bytes] | None:
    """The leftmost match starting between the `lead` run before `pos` and `pos` itself, ending by `end`.

    Anchored `match` calls cost the length of a match, whereas a `search` from the anchor would
    scan the rest of a (possibly 100 KB) line whenever the rule fails at this anchor. In JSONL a
    match never crosses a line (`end` is the line's end); in plain text a multi-line secret may.
    """
    assert compiled.raw is not None
    if not compiled.lead:
        return compiled.raw.match(data, pos, end)
    before = data[max(floor, pos - compiled.rule.lead_max) : pos]
    lo = pos - (len(before) - len(before.rstrip(compiled.lead)))
    # A match starts at a word start: the run's first byte or just after a non-alphanumeric
    # byte inside it (`.`, `_`, `-`, `"`); trying every byte would cost a regex call each.
    for start in _word_starts(data, lo, pos):
        match = compiled.raw.match(data, start, end)
        if match is not None and compiled.names(match):
            return match
    return None


# where a token or name can start inside a run: after a JSON escape (`\n`, `\u0007`), an ANSI
# colour code (`…[32m`), or any other non-alphanumeric byte (which may itself start a match: `<`, `(`)
_WORD_BREAK = re.compile(rb"\\[nrtbf]|\\u[0-9a-fA-F]{4}|(?<=\[)[0-9;]{1,8}m|[^A-Za-z0-9]")


def _word_starts(data: bytes, lo: int, pos: int) -> Iterator[int]:
    """`lo`, every word break in [lo, pos) and the byte after it, then `pos` itself."""
    yield lo
    for m in _WORD_BREAK.finditer(data, max(0, lo - 1), pos):
        if m.start() > lo:
            yield m.start()
        if lo < m.end() < pos:
            yield m.end()
    if pos > lo:
        yield pos


def _group_span(match: re.Match[bytes], group: int | str) -> tuple[int, int] | None:
    start, end = match.span(group)
    return (start, end) if start >= 0 and end > start else None


def _near(lower: bytes, pos: int, words: tuple[bytes, ...]) -> bool:
    """One of `words` occurs before `pos` on the same line, within _NEAR_BACK bytes."""
    start = max(0, pos - _NEAR_BACK, lower.rfind(b"\n", max(0, pos - _NEAR_BACK), pos) + 1)
    window = lower[start:pos]
    return any(w in window for w in words)


def _neighbourhood(data: bytes, at: int) -> tuple[int, int]:
    """The byte range of the line holding `at` and _NEAR_LINES lines on each side."""
    lo = hi = at
    for _ in range(_NEAR_LINES + 1):
        lo = max(data.rfind(b"\n", max(0, at - _NEAR_BYTES), max(lo - 1, 0)), 0)
    for _ in range(_NEAR_LINES + 1):
        found = data.find(b"\n", hi + 1, at + _NEAR_BYTES)
        hi = found if found >= 0 else min(len(data), at + _NEAR_BYTES)
    return lo, hi


def _bounded(data: bytes, start: int, end: int, value: bytes) -> bool:
    """A copy counts unless it is part of a longer word (`\\n` before it is an escape, no letter)."""
    escaped = start >= 2 and data[start - 2] == 0x5C  # `\nVALUE`: the `n` belongs to the escape
    if value[0] in _ALNUM and start > 0 and data[start - 1] in _ALNUM and not escaped:
        return False
    return not (value[-1] in _ALNUM and end < len(data) and data[end] in _ALNUM)


def _accept_all(accepted: list[_Span], spans: Iterable[_Span]) -> None:
    """Add the spans that overlap neither an accepted span nor each other (the earlier one wins);
    `accepted` stays sorted. Bisection on the starts and one merge: a rule may add thousands."""
    new = sorted(spans, key=_START_KEY)
    if not new:
        return
    starts = [span.start for span in accepted]
    kept: list[_Span] = []
    last_end = -1
    for span in new:
        i = bisect.bisect_left(starts, span.start)
        if span.start < last_end or (i and accepted[i - 1].end > span.start):
            continue
        if i < len(accepted) and accepted[i].start < span.end:
            continue
        kept.append(span)
        last_end = span.end
    if kept:
        accepted[:] = sorted(accepted + kept, key=_START_KEY)


_START_KEY = attrgetter("start")


def _apply(data: bytes, spans: list[_Span], counts: dict[str, int]) -> bytes:
    """`data` with every span replaced by its marker (the same object when there is none)."""
    if not spans:
        return data
    pieces: list[Any] = []
    done = 0
    for span in spans:
        pieces += (data[done : span.start], _replacement(data[span.start : span.end], span.kind))
        done = span.end
        counts[span.kind] = counts.get(span.kind, 0) + 1
    return b"".join(pieces) + data[done:]


def _replacement(secret: bytes, kind: str) -> bytes:
    """The marker; a secret spanning JSON strings (`","+`) gets one marker per string."""
    marker = b"[REDACTED:" + kind.encode() + b"]"
    if b'"' not in secret:
        return marker
    parts = _STRING_BREAK.split(secret)
    return b"".join(part if i % 2 else (marker if part else b"") for i, part in enumerate(parts))


def _accept(rule: Rule, secret: str) -> bool:
    return rule.validator is None or rule.validator(secret)


def _compile(index: int, rule: Rule) -> _Compiled:
    """Compile a rule, turning every problem into a ValueError that names it."""
    if not isinstance(rule.kind, str) or not _KIND_RE.fullmatch(rule.kind):
        raise ValueError(f"redaction rule {rule.kind!r}: kind must match [A-Za-z0-9_.-]{{1,64}}")
    try:
        text = re.compile(rule.pattern)
        raw = _raw_pattern(rule)
        for anchor in (*rule.anchors, *rule.lower_anchors):
            re.compile(anchor)
    except (re.error, TypeError, UnicodeEncodeError) as exc:
        raise ValueError(f"redaction rule {rule.kind!r}: invalid pattern: {exc}") from exc
    group = rule.group
    if (isinstance(group, int) and not 0 <= group <= text.groups) or (
        isinstance(group, str) and group not in text.groupindex
    ):
        raise ValueError(f"redaction rule {rule.kind!r}: pattern has no group {group!r}")
    lead = bytes(b for b in range(128) if re.fullmatch(f"[{rule.lead}]", chr(b))) if rule.lead else b""
    try:
        name = re.compile(rule.name_pattern) if rule.name_pattern else None
    except re.error as exc:
        raise ValueError(f"redaction rule {rule.kind!r}: invalid name pattern: {exc}") from exc
    if name is not None and "name" not in text.groupindex:
        raise ValueError(f"redaction rule {rule.kind!r}: a name pattern needs a (?P<name>…) group")
    return _Compiled(index, rule, text, raw, lead, b"[REDACTED:" + rule.kind.encode() + b"]", name)


def _raw_pattern(rule: Rule) -> re.Pattern[bytes] | None:
    if rule.prefixes or rule.anchors or rule.lower_anchors or rule.context:
        return re.compile(rule.pattern.encode("utf-8"))
    if _bytes_safe(rule.pattern):
        return re.compile(rule.pattern.encode("ascii"))
    return None


_UNICODE_SENSITIVE = re.compile(r"\\[wWdDsSbBuUNx]|\(\?[a-zA-Z]*i|\[\^|\.")


def _bytes_safe(pattern: str) -> bool:
    """Whether a pattern matches the same on UTF-8 bytes as on text (so it can be its own anchor).

    True for ASCII literals and positive classes; `.`, `[^…]`, `\\w`, `\\s`, `\\d`, `\\b`,
    escapes and IGNORECASE match differently (per byte, or ASCII only). Conservative: an escaped
    `\\.` also counts as unsafe.
    """
    return pattern.isascii() and not _UNICODE_SENSITIVE.search(pattern)


def _rule_from_mapping(index: int, spec: Any) -> Rule:
    if not isinstance(spec, Mapping) or not isinstance(spec.get("pattern"), str):
        raise ValueError(f"redaction config: extra rule #{index} needs a 'kind' and a 'pattern'")
    kind = spec.get("kind", f"extra_{index}")
    threshold = spec.get("min_entropy")
    validator = partial(looks_secret, threshold=float(threshold)) if threshold is not None else None
    rule = Rule(str(kind), spec["pattern"], spec.get("group", 0), validator)
    _compile(0, rule)  # fail early, naming the rule
    return rule


def _sub(compiled: _Compiled, text: str, counts: dict[str, int]) -> str:
    """One rule over `text`, replacing only the secret group of accepted matches."""
    rule, replacement = compiled.rule, compiled.replacement.decode()

    def replace(match: re.Match[str]) -> str:
        secret = match.group(rule.group)
        if not secret or not compiled.accepts(match, secret):
            return match.group(0)
        counts[rule.kind] = counts.get(rule.kind, 0) + 1
        whole, base = match.group(0), match.start()
        start, end = match.span(rule.group)
        return whole[: start - base] + replacement + whole[end - base :]

    return compiled.text.sub(replace, text)


def _group_by_line(buf: _Buf, spans: list[_Span]) -> Iterator[tuple[int, int, list[_Span]]]:
    """(line start, line end without newline, spans inside) for each line holding sorted spans."""
    newline = b"\n" if isinstance(buf, bytes) else "\n"
    i = 0
    while i < len(spans):
        start = buf.rfind(newline, 0, spans[i].start) + 1
        end = buf.find(newline, spans[i].start)
        end = len(buf) if end < 0 else end
        j = i
        while j < len(spans) and spans[j].start < end:
            j += 1
        yield start, max(end, spans[j - 1].end), spans[i:j]
        i = j


def _splice(buf: _Buf, edits: list[tuple[int, int, int, Any]]) -> Any:
    """`buf` with the (number, start, end, new) edits applied; everything else copied as is."""
    if not edits:
        return buf
    pieces: list[Any] = []
    done = 0
    for _, start, end, new in edits:
        pieces += (buf[done:start], new)
        done = end
    pieces.append(buf[done:])
    return buf[:0].join(pieces)


def _still_json(before: bytes, after: bytes) -> bool:
    """False only when redaction broke a line that parsed before (torn lines stay as they are)."""
    try:
        json.loads(after)
        return True
    except ValueError:
        try:
            json.loads(before)
        except ValueError:
            return True
        return False


def _map_strings(node: Any, fn: Callable[[str], str]) -> Any:
    """Apply `fn` to every string value of a decoded JSON document (keys are left alone)."""
    if isinstance(node, str):
        return fn(node)
    stack: list[Any] = [node] if isinstance(node, (dict, list)) else []
    while stack:
        current = stack.pop()
        items = current.items() if isinstance(current, dict) else enumerate(current)
        for key, value in list(items):
            if isinstance(value, str):
                current[key] = fn(value)
            elif isinstance(value, (dict, list)):
                stack.append(value)
    return node


def _dump(obj: Any) -> bytes:
    """Compact JSON the way Claude Code writes it; lone surrogates stay \\u-escaped."""
    try:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeEncodeError:
        return json.dumps(obj, separators=(",", ":")).encode()


def _merge(into: dict[str, int], counts: Mapping[str, int]) -> None:
    for kind, n in counts.items():
        into[kind] = into.get(kind, 0) + n

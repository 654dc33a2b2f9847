"""Spans of secrets in a buffer: matching a rule at a candidate, merging, replacing, splicing lines."""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from operator import attrgetter, itemgetter
from typing import Any, NamedTuple, TypeVar

from .compiled import Compiled, marker
from .copies import Copy

_STRING_BREAK = re.compile(rb'(\\{0,8}"[ \t]{0,4},[ \t]{0,4}\\{0,8}"[+ -]?)')
_ALNUM = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_NEAR_LINES = 3  # copies of a value are searched in its line and this many lines before and after it
_NEAR_BYTES = 1 << 20  # … but never more than this far away
_NEWLINE = re.compile(rb"\n")


class Span(NamedTuple):
    """A secret's bytes `[start, end)` and its kind; ordered by start, then end (a tuple: a
    secret-dense buffer makes and sorts tens of thousands)."""

    start: int
    end: int
    kind: str


Buf = TypeVar("Buf", bytes, str)
Edit = tuple[int, int, int, Buf]  # (0-based line number, start, end, replacement line)


class Compact:
    """`data` without the duplicate copies, for the scans, and the way back to `data` offsets."""

    def __init__(self, data: bytes, duplicates: list[Copy]) -> None:
        self._starts: list[int] = [0]  # compact offset where each kept piece starts
        self._shifts: list[int] = [0]  # what to add to a compact offset inside that piece
        if not duplicates:
            self.data = data
            return
        view = memoryview(data)  # slices of a view are not copies: the join below is the only one
        pieces, done, removed = [], 0, 0
        for copy in duplicates:
            pieces.append(view[done : copy.start])
            removed += copy.end - copy.start
            self._starts.append(copy.end - removed)  # the next piece starts where this copy ended
            self._shifts.append(removed)
            done = copy.end
        pieces.append(view[done:])
        self.data = b"".join(pieces)

    def original(self, positions: list[int]) -> list[int]:
        if len(self._starts) == 1:
            return positions
        return [p + self._shifts[bisect.bisect_right(self._starts, p) - 1] for p in positions]

    def original_range(self, start: int, end: int) -> tuple[int, int]:
        """The `data` range of a compact range (one that spans a skipped copy takes it in)."""
        first, last = self.original([start, end])
        return first, last


def into_duplicates(data: bytes, spans: list[Span], duplicates: list[Copy]) -> list[Span]:
    """The spans found in a tool_result content, mapped into its skipped structured copy (copies.py):
    at the same line and column (a numbered span drops its line numbers), or else wherever its value is."""
    out: list[Span] = []
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
                out.append(Span(mapped[0], mapped[1], span.kind))
            else:
                at = data.find(value, copy.start, copy.end)
                while at >= 0:
                    out.append(Span(at, at + len(value), span.kind))
                    at = data.find(value, at + len(value), copy.end)
            j += 1
    return out


# --- matching helpers ----------------------------------------------------------------------------


def match_at(compiled: Compiled, data: bytes, pos: int, floor: int, end: int) -> re.Match[bytes] | None:
    """The leftmost match starting between the `lead` run before `pos` and `pos` itself, ending by `end`.

    Anchored `match` calls cost the length of a match, whereas a `search` from the anchor would
    scan the rest of a (possibly 100 KB) line whenever the rule fails at this anchor. In JSONL a
    match never crosses a line (`end` is the line's end); in plain text a multi-line secret may.
    """
    assert compiled.raw is not None
    if not compiled.lead:
        return compiled.raw.match(data, pos, end)
    before = data[max(floor, pos - compiled.rule.lead_max) : pos]
    named = before.rstrip(compiled.gap) if compiled.gap else before
    head = pos - (len(before) - len(named))  # where the lead run ends: the anchor, or its gap
    lo = head - (len(named) - len(named.rstrip(compiled.lead)))
    if lo == pos:  # no run before the anchor: its only start (most candidates of a dense buffer)
        match = compiled.raw.match(data, pos, end)
        return match if match is not None and compiled.names(match) else None
    # A match starts at a word start: the run's first byte or just after a non-alphanumeric
    # byte inside it (`.`, `_`, `-`, `"`); trying every byte would cost a regex call each.
    for start in _word_starts(data, lo, head):
        match = compiled.raw.match(data, start, end)
        if match is not None and compiled.names(match):
            return match
    return None


# where a token or name can start inside a run: after a JSON escape (`\n`, `\u0007`), an ANSI
# colour code's last number (`…[32m`, `…[1;33m`), any other non-alphanumeric byte (which may itself
# start a match: `<`, `(`), or at a camelCase word (`bannerBearToken`: the credential word is its last word)
_WORD_BREAK = re.compile(rb"\\[nrtbf]|\\u[0-9a-fA-F]{4}|(?<=[\[;])[0-9]{1,3}m|[^A-Za-z0-9]|(?<=[a-z0-9])(?=[A-Z])")


def _word_starts(data: bytes, lo: int, pos: int) -> Iterator[int]:
    """`lo`, every word break in [lo, pos) and the byte after it, then `pos` itself."""
    yield lo
    # from a few bytes back: the run may start inside a break (`\n`'s `n`, the digits of `\u2192`, a
    # colour code's `32m`)
    for m in _WORD_BREAK.finditer(data, max(0, lo - 5), pos):
        if m.start() > lo:
            yield m.start()
        if lo < m.end() < pos and m.end() > m.start():
            yield m.end()
    if pos > lo:
        yield pos


def group_span(match: re.Match[bytes], group: int | str) -> tuple[int, int] | None:
    start, end = match.span(group)
    return (start, end) if start >= 0 and end > start else None


class Lines:
    """Where `data`'s lines end, found once: a dense buffer looks up the neighbourhood of tens of
    thousands of values, and a bisection costs less than eight searches each."""

    def __init__(self, data: bytes) -> None:
        self._size = len(data)
        self._ends = [m.start() for m in _NEWLINE.finditer(data)]

    def neighbourhood(self, at: int) -> tuple[int, int]:
        """The byte range of the line holding `at` and _NEAR_LINES lines on each side (the line
        break just before `at` is not counted: `at` may start its line)."""
        floor, lo = max(0, at - _NEAR_BYTES), at
        for _ in range(_NEAR_LINES + 1):
            i = bisect.bisect_right(self._ends, lo - 2) - 1  # a break before `lo - 1`
            lo = self._ends[i] if i >= 0 and self._ends[i] >= floor else 0
        return lo, self.after(at)

    def after(self, at: int) -> int:
        """Where the _NEAR_LINES-th line after the one holding `at` ends (a neighbourhood's end)."""
        i = bisect.bisect_right(self._ends, at) + _NEAR_LINES
        if i < len(self._ends) and self._ends[i] < at + _NEAR_BYTES:
            return self._ends[i]
        return min(self._size, at + _NEAR_BYTES)


def bounded(data: bytes, start: int, end: int, value: bytes) -> bool:
    """A copy counts unless it is part of a longer word (`\\n` before it is an escape, no letter)."""
    escaped = start >= 2 and data[start - 2] == 0x5C  # `\nVALUE`: the `n` belongs to the escape
    if value[0] in _ALNUM and start > 0 and data[start - 1] in _ALNUM and not escaped:
        return False
    return not (value[-1] in _ALNUM and end < len(data) and data[end] in _ALNUM)


def accept_all(accepted: list[Span], spans: Iterable[Span]) -> None:
    """Add the spans that overlap neither an accepted span nor each other (the earlier one wins);
    `accepted` stays sorted. Bisection on the starts and one merge: a rule may add thousands."""
    new = sorted(spans, key=_START_KEY)
    if not new:
        return
    starts = [span.start for span in accepted]
    kept: list[Span] = []
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


class Ranked:
    """Batches of spans added in order of precedence, resolved as `accept_all` one batch after
    another would (an earlier batch wins an overlap; within a batch the earlier start), but in
    one sort: a secret-dense buffer has tens of thousands of spans from a hundred rules, and
    merging each batch into the sorted whole would cost the whole list per rule."""

    def __init__(self) -> None:
        self._batches: list[list[Span]] = []
        self._resolved: list[Span] = []
        self._absorbing: set[int] = set()

    def add(self, spans: Iterable[Span], *, absorbing: bool = False) -> None:
        """Add a batch, below every earlier one; an `absorbing` batch's span (a copy of a whole
        recognised value) replaces the earlier spans it wholly contains (a rule that found only
        part of that copy, say a JWT's payload behind a patch line's `+`)."""
        batch = list(spans)
        if batch:
            if absorbing:
                self._absorbing.add(len(self._batches) + 1)
            self._batches.append(batch)

    def spans(self) -> list[Span]:
        """The accepted spans, sorted by start."""
        if self._batches:
            self._resolved = _merge(self._resolved, self._batches, self._absorbing)
            self._batches = []
            self._absorbing = set()
        return self._resolved


def _merge(resolved: list[Span], batches: list[list[Span]], absorbing: set[int]) -> list[Span]:
    """`_resolve` of the resolved spans (rank 0) and later batches, re-sorting only what the new
    spans touch: the resolved spans are disjoint, so one no new span overlaps is accepted as it is,
    and a new span over a resolved one's bytes (another rule, or a copy, finding the same value)
    adds nothing. Only the new spans and those they overlap are resolved again."""
    if not resolved:
        return _resolve([resolved, *batches], absorbing)
    ends = [span.end for span in resolved]  # ascending: the spans are disjoint and sorted
    touched: set[int] = set()
    fresh: list[list[Span]] = []
    for batch in batches:
        kept = []
        for span in batch:
            i = bisect.bisect_right(ends, span.start)
            if i < len(resolved) and (resolved[i].start, resolved[i].end) == (span.start, span.end):
                continue
            kept.append(span)
            while i < len(resolved) and resolved[i].start < span.end:
                touched.add(i)
                i += 1
        fresh.append(kept)
    settled = _resolve([[resolved[i] for i in sorted(touched)], *fresh], absorbing)
    if not settled:
        return resolved
    untouched = [span for i, span in enumerate(resolved) if i not in touched] if touched else resolved
    return sorted(untouched + settled, key=_START_KEY)


_ABSORBING = 1 << 30  # added to an absorbing batch's rank: it comes after every other batch
_RANK_THEN_START = itemgetter(1, 0)


def _resolve(batches: list[list[Span]], absorbing: set[int]) -> list[Span]:
    # an overlap only involves spans of one cluster (a run of spans joined by overlaps, in start
    # order); a cluster of one, the usual case, is accepted as it is
    ranked = sorted(
        (span.start, rank + _ABSORBING if rank in absorbing else rank, span.end, span)
        for rank, batch in enumerate(batches)
        for span in batch
    )
    out: list[Span] = []
    cluster: list[tuple[int, int, int, Span]] = []
    reach = -1
    for item in ranked:
        if item[0] >= reach and cluster:
            _settle(cluster, out)
            cluster = []
        cluster.append(item)
        reach = max(reach, item[2])
    if cluster:
        _settle(cluster, out)
    return out


def _settle(cluster: list[tuple[int, int, int, Span]], out: list[Span]) -> None:
    first = cluster[0]
    if len(cluster) == 1 or all(item[0] == first[0] and item[2] == first[2] for item in cluster):
        out.append(first[3])  # one span, or copies of one (the usual overlap): the first rule's
        return
    kept: list[Span] = []
    absorbed: set[Span] = set()
    for _, rank, _, span in sorted(cluster, key=_RANK_THEN_START):
        clashes = [other for other in kept if not (span.end <= other.start or other.end <= span.start)]
        inside = all(span.start <= o.start and o.end <= span.end for o in clashes)
        same = len(clashes) == 1 and (clashes[0].start, clashes[0].end) == (span.start, span.end)
        if rank >= _ABSORBING and clashes and inside and not same:
            absorbed.update(clashes)  # a copy of the whole value replaces the parts found inside it
            kept = [other for other in kept if other not in absorbed]
            clashes = []
        if not clashes:
            kept.append(span)
    out.extend(sorted(kept, key=_START_KEY))


def apply_spans(data: bytes, spans: list[Span], counts: dict[str, int]) -> bytes:
    """`data` with every span replaced by its marker (the same object when there is none)."""
    if not spans:
        return data
    pieces: list[Any] = []
    done = 0
    for span in spans:
        pieces += (data[done : span.start], replacement(data[span.start : span.end], span.kind))
        done = span.end
        counts[span.kind] = counts.get(span.kind, 0) + 1
    return b"".join(pieces) + data[done:]


def replacement(secret: bytes, kind: str) -> bytes:
    """The marker; a secret spanning JSON strings (`","+`) gets one marker per string."""
    if b'"' not in secret:
        return marker(kind)
    parts = _STRING_BREAK.split(secret)
    return b"".join(part if i % 2 else (marker(kind) if part else b"") for i, part in enumerate(parts))


def group_by_line(buf: Buf, spans: list[Span]) -> Iterator[tuple[int, int, list[Span]]]:
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


def splice(buf: Buf, edits: list[tuple[int, int, int, Any]]) -> Any:
    """`buf` with the (number, start, end, new) edits applied; everything else copied as is."""
    if not edits:
        return buf
    # a view's slices of a bytes buffer are not copies: the join is the only copy of the unchanged bytes
    view: Any = memoryview(buf) if isinstance(buf, bytes) else buf
    pieces: list[Any] = []
    done = 0
    for _, start, end, new in edits:
        pieces += (view[done:start], new)
        done = end
    pieces.append(view[done:])
    return buf[:0].join(pieces)


# bytes a JSON text may hold outside its strings: a span with any other byte lies inside a string
_OUTSIDE_STRINGS = b"0123456789.eE+-truefalsn \t\r\n{}[]:,"


def inside_strings(line: bytes, spans: Iterable[Span]) -> bool:
    """Each span lies inside one JSON string and replacing it by a marker keeps the line's JSON as
    it was: no quote or backslash in it, not the escaped half of a `\\x` pair, no UTF-8
    character cut, and a byte no number, literal or structure holds. Spares a parse per line."""
    for span in spans:
        secret = line[span.start : span.end]
        if b'"' in secret or b"\\" in secret or not secret.translate(None, _OUTSIDE_STRINGS):
            return False
        after = line[span.end] if span.end < len(line) else 0
        if 0x80 <= secret[0] < 0xC0 or 0x80 <= after < 0xC0:
            return False
        at = span.start
        while at > 0 and line[at - 1] == 0x5C:
            at -= 1
        if (span.start - at) % 2:
            return False
    return True


def still_json(before: bytes, after: bytes) -> bool:
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


def map_strings(node: Any, fn: Callable[[str], str]) -> Any:
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


def dump_json(obj: Any) -> bytes:
    """Compact JSON the way Claude Code writes it; lone surrogates stay \\u-escaped."""
    try:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeEncodeError:
        return json.dumps(obj, separators=(",", ":")).encode()


def merge_counts(into: dict[str, int], counts: Mapping[str, int]) -> None:
    for kind, n in counts.items():
        into[kind] = into.get(kind, 0) + n


# A value folded over two lines (a YAML double-quoted scalar, a shell continuation): a backslash
# right after the value, then the next line (in JSONL an escaped `\\n`, in a Read result its line
# number, in a structuredPatch hunk the next string `","+`) and its indentation, then the rest.
_FOLD = re.compile(
    rb"\\\\(?:\\n(?: {0,8}[0-9]{1,9}(?:\xe2\x86\x92|\\u2192))?[ \t]{0,64}|\",\"\+[ \t]{0,64})[^\s\"'\\`]{1,4096}"
)
_TOKEN_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+=-")


def join_folds(data: bytes, spans: list[Span]) -> list[Span]:
    """JSONL spans that end where their value is folded onto the next line, extended over the rest
    of it (a secret found by its first half must not leave the second); sorted spans stay disjoint."""
    out: list[Span] = []
    for span in spans:
        if out and span.start < out[-1].end:  # reached by the previous span's extension: one span
            out[-1] = Span(out[-1].start, max(out[-1].end, span.end), out[-1].kind)
            continue
        at = span.end - 2 if data.endswith(b"\\\\", span.start, span.end) else span.end
        if at > span.start and data[at - 1] in _TOKEN_BYTES:
            match = _FOLD.match(data, at)
            if match is not None:
                span = Span(span.start, match.end(), span.kind)
        out.append(span)
    return out

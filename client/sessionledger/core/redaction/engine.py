"""Replace secrets in transcript bytes by `[REDACTED:<kind>]` before anything leaves the machine.

Three inputs: `redact_bytes` takes JSONL, one JSON object per line, whichever agent wrote it
(Claude Code, Codex, Gemini: the text a secret sits in is a JSON string literal); `redact_plain`
plain text where a secret may span lines (a saved tool output, a log); `redact_text` any one text
(a tool result part as the tool printed it). In JSONL, secrets are matched on the *escaped* line,
so every rule stops at `"` and `\\` (a secret next to `\\n`, `\\"` or `\\\\` ends exactly at the
escape) and the replacement holds neither: a redacted line stays valid JSON. A secret split across
JSON strings (a private key in an Edit result's `structuredPatch`, one string per line) is replaced
string by string, so the hunk keeps its lines. As a safety net, a changed line that no longer
parses (say a custom rule ate a quote) is redacted again string by string on its decoded JSON.
Every path edits line by line through one loop (`_line_edits`).

Every copy: once any copy of a value is recognised (the key in `toolUseResult.file.content`), every
other occurrence in the buffer is replaced too (the same key in the numbered `tool_result` text, in
`stdout`, in a later prompt, a bare `+VALUE` patch line), and each line of a multi-line secret
counts as such a value.

Speed: the rules' anchors (ours and the catalogue's, catalogue.py) are merged into a few scans
(scans.py), one per distinct leading literal (`_`, `-`, `.`, `A`, `://` on the raw bytes; `p`,
`ke`, `cre`, `auth`, `zure` on the ASCII-lowercased bytes). Each scan is a regex starting with
that literal (sre finds those at memory speed) followed by cheap gates and a lookahead over what
the anchors need next, so a hit is rare; only at a hit does Python pick the candidate rules, and a
rule's full regex is tried only there, never over a whole line. A `toolUseResult` copy of the
tool_result content is not scanned at all (copies.py). Every regex is linear: bounded or possessive
quantifiers, no nested ambiguity. Bytes outside the replaced spans are copied through: untouched
lines stay byte-identical. Escaped text (JSON `\\u00XX`, `\\/`, HTML entities, `%XX`) is searched
once more decoded (decoding.py), and what is found there redacts the original bytes.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from itertools import accumulate
from operator import itemgetter
from typing import Any

from .catalogue import CATALOGUE_PREFIX
from .compiled import Compiled, compile_rule, marker, rule_from_mapping, substitute
from .copies import duplicate_copies
from .decoding import Decoded, base64_blocks, encoded_windows, escaped_quote_windows
from .rules import Rule
from .scans import Haystack, build_groups, scan, self_anchored
from .spans import (
    Buf,
    Compact,
    Edit,
    Lines,
    Ranked,
    Span,
    accept_all,
    apply_spans,
    bounded,
    dump_json,
    group_by_line,
    group_span,
    inside_strings,
    into_duplicates,
    join_folds,
    map_strings,
    match_at,
    merge_counts,
    replacement,
    splice,
    still_json,
)
from .validators import shannon_entropy

_PROPAGATE_MIN = 8  # shortest value whose other copies are redacted too
_FRAGMENT_MIN = 16  # shortest line of a multi-line secret treated the same way
# up to this many distinct values, copies are searched in the whole buffer (a search of each is
# a pass at memory speed: a session holds a handful; the bench's secret-dense corpus thousands)
_GLOBAL_COPIES = 32
_GLOBAL_MIN = 12  # … if they are at least this long (and random enough); else near where found
_FRAGMENT_SPLIT = re.compile(
    rb'\\[nr]|\\\\n|\r|\n|\\{0,8}"[ \t]{0,4},[ \t]{0,4}\\{0,8}"[+ -]?'  # line ends, patch strings
    rb"|(?:^|(?<=\\n))[ \t]{0,8}[0-9]{1,9}(?:\xe2\x86\x92|\\u2192|\\t)"  # Read line numbers: `     5→`
)
_PEM_LINE = re.compile(rb"-----(?:BEGIN|END)|^[A-Za-z-]{1,40}:")


def _line_edits(buf: Buf, spans: list[Span], rewrite: Callable[[Buf, list[Span]], Buf | None]) -> list[Edit[Buf]]:
    """(line number, start, end, new line) for each line holding sorted `spans` that `rewrite`
    changes; `rewrite` gets the line and its spans relative to it (bytes or text alike)."""
    edits: list[Edit[Buf]] = []
    newline = b"\n" if isinstance(buf, bytes) else "\n"
    number, counted_to = 0, 0
    for start, end, inside in group_by_line(buf, spans):
        number += buf.count(newline, counted_to, start)
        counted_to = start
        new = rewrite(buf[start:end], [Span(s.start - start, s.end - start, s.kind) for s in inside])
        if new is not None:
            edits.append((number, start, end, new))
    return edits


def _around(lines: Lines, places: list[int]) -> list[tuple[int, int]]:
    """The neighbourhoods of ascending `places`, overlapping ones joined (a place inside the last
    range only moves its end: the lines before it are in already)."""
    out: list[tuple[int, int]] = []
    for at in places:
        if out and at < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], lines.after(at)))
        else:
            out.append(lines.neighbourhood(at))
    return out


def _unclaimed(data: bytes, positions: list[int], accepted: list[Span], reach: int) -> list[int]:
    """The positions no accepted span starts within `reach` bytes after on the same line (`accepted`
    is sorted): a span on the next line is another word's value (`a_key = …` above `a_secret = …`)."""
    starts = [span.start for span in accepted]
    out = []
    for pos in positions:
        i = bisect_left(starts, pos)
        if i == len(starts) or starts[i] > pos + reach or _line_break(data, pos, starts[i]):
            out.append(pos)
    return out


def _line_break(data: bytes, start: int, end: int) -> bool:
    return data.find(b"\n", start, end) >= 0 or data.find(b"\\n", start, end) >= 0


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


class _Skipped:
    """A JSONL buffer's duplicate tool output copies (copies.py) and the buffer without them, made
    once for both searches of `redact_bytes`; for plain text, nothing is skipped."""

    def __init__(self, data: bytes, *, jsonl: bool) -> None:
        self.duplicates = duplicate_copies(data) if jsonl else []
        self.compact = Compact(data, self.duplicates)


class Redactor:
    """Applies an ordered rule set: specific token formats first, generic assignments last."""

    def __init__(
        self, rules: Iterable[Rule] | None = None, *, disabled: Iterable[str] = (), extra: Iterable[Rule] = ()
    ) -> None:
        from . import DEFAULT_RULES

        off = set(disabled)
        chosen = [r for r in (DEFAULT_RULES if rules is None else tuple(rules)) if r.kind not in off]
        # Extra rules run before the keyword catch-alls so that they claim their own kind.
        # The catalogue's rules come last: ours know the transcript's shapes and name their kinds.
        late = [r for r in chosen if r.id.startswith(CATALOGUE_PREFIX)]
        own = [r for r in chosen if not r.id.startswith(CATALOGUE_PREFIX)]
        catch_all = [r for r in own if r.kind in ("generic_secret", "password")]
        ordered = [r for r in own if r.kind not in ("generic_secret", "password")] + list(extra) + catch_all + late
        self._rules = tuple(compile_rule(i, rule) for i, rule in enumerate(ordered))
        self._textual = tuple(c for c in self._rules if c.raw is None)
        self._groups = build_groups(self._rules)
        self._self_anchored = tuple(c for c in self._rules if c.raw is not None and self_anchored(c.rule))
        self._context_rules = tuple(c for c in self._rules if c.rule.context)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.rule.kind for c in self._rules))

    @property
    def scans(self) -> tuple[tuple[str, bool], ...]:
        """Each merged scan's literal and whether it searches the lowercased text: each is a pass
        over every buffer, so a rule's anchor should land on one of these (docs/redaction.md "Speed")."""
        return tuple((group.key.decode(), group.lowered) for group in self._groups)

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
        extra = [rule_from_mapping(i, spec) for i, spec in enumerate(cfg.get("extra") or ())]
        return cls(disabled=disabled, extra=extra)

    # --- public API ----------------------------------------------------------------------------

    def redact_bytes(self, data: bytes) -> RedactionResult:
        """Redact JSONL bytes; lines without a secret are copied through byte-identical."""
        counts: dict[str, int] = {}
        skipped = _Skipped(data, jsonl=True)
        found = self._find_spans(data, jsonl=True, skipped=skipped)
        # one edit for both: a span of the encoded search that overlaps one found plainly is
        # dropped, as it found nothing more once the plain one was replaced
        data, numbers = self._edit_lines(data, found, counts, self._encoded_spans(data, jsonl=True, skipped=skipped))
        changed = set(numbers)
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
        data = apply_spans(data, spans, counts)
        data, numbers = self._edit_lines(data, self._encoded_spans(data, jsonl=False), counts)
        changed.update(numbers)
        if self._textual:
            text, numbers = self._redact_textual_plain(data.decode("utf-8", "surrogateescape"), counts)
            data = text.encode("utf-8", "surrogateescape")
            changed.update(numbers)
        return RedactionResult(data, counts, sorted(changed))

    def redact_text(self, text: str) -> tuple[str, dict[str, int]]:
        """Redact one text (any text, not only JSONL) with every rule; returns (text, counts)."""
        counts: dict[str, int] = {}
        data = text.encode("utf-8", "surrogateescape")
        new = apply_spans(data, self._find_spans(data, jsonl=False), counts)
        if new is not data:
            text = new.decode("utf-8", "surrogateescape")
        for compiled in self._textual:
            text = substitute(compiled, text, counts)
        return text, counts

    def _redact_textual_plain(self, text: str, counts: dict[str, int]) -> tuple[str, list[int]]:
        changed: list[int] = []
        lines = text.split("\n")
        for i, line in enumerate(lines):
            new = line
            for compiled in self._textual:
                new = substitute(compiled, new, counts)
            if new != line:
                lines[i] = new
                changed.append(i)
        return "\n".join(lines), changed

    # --- finding spans -------------------------------------------------------------------------

    def _find_spans(self, data: bytes, *, jsonl: bool, skipped: _Skipped | None = None) -> list[Span]:
        """Every secret span, earlier rules winning where two overlap, then every other copy.

        In JSONL, a `toolUseResult` string that repeats its line's tool_result content is not
        scanned (copies.py): what is found in the content is mapped into it.
        """
        skipped = skipped or _Skipped(data, jsonl=jsonl)
        duplicates, compact = skipped.duplicates, skipped.compact
        candidates, context_lines = scan(self._groups, Haystack(compact.data))
        candidates = {rule: compact.original(positions) for rule, positions in candidates.items()}
        context_lines = {rule: compact.original(positions) for rule, positions in context_lines.items()}
        ranked = Ranked()
        for compiled in self._rules:
            if compiled.raw is None:
                continue
            positions = candidates.get(compiled.index)
            if positions and compiled.rule.yields:
                positions = _unclaimed(data, positions, ranked.spans(), compiled.rule.yields)
            if positions:
                ranked.add(self._rule_spans(compiled, data, sorted(set(positions)), jsonl))
            lines = context_lines.get(compiled.index)
            if lines:
                ranked.add(self._context_spans(compiled, data, lines))
        for compiled in self._self_anchored:
            positions = [m.start() for m in compiled.raw.finditer(data)]  # type: ignore[union-attr]
            ranked.add(self._rule_spans(compiled, data, positions, jsonl))
        if duplicates and ranked.spans():
            ranked.add(into_duplicates(data, ranked.spans(), duplicates))
        if ranked.spans():
            ranked.add(self._copies(data, ranked.spans()), absorbing=True)
        accepted = ranked.spans()
        return join_folds(data, accepted) if jsonl else accepted

    def _rule_spans(self, compiled: Compiled, data: bytes, positions: list[int], jsonl: bool) -> list[Span]:
        """Matches of one rule at its candidate positions, left to right, never overlapping."""
        spans: list[Span] = []
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
            match = match_at(compiled, data, pos, consumed, line_end)
            if match is None:
                continue
            consumed = max(match.end(), match.start() + 1)
            span = group_span(match, rule.group)
            if span is not None and compiled.accepts(match, data[span[0] : span[1]].decode("utf-8", "surrogateescape")):
                spans.append(Span(span[0], span[1], rule.kind))
        return spans

    def _context_spans(self, compiled: Compiled, data: bytes, hits: list[int]) -> list[Span]:
        """A context rule runs over the line of each context word and the `window` lines after it."""
        spans: list[Span] = []
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
                span = group_span(match, compiled.rule.group)
                if span and compiled.accepts(match, data[span[0] : span[1]].decode("utf-8", "surrogateescape")):
                    spans.append(Span(span[0], span[1], compiled.rule.kind))
                if compiled.then is not None:
                    spans += self._block_entries(compiled, data, match.end(), end)
            done = end
        return spans

    @staticmethod
    def _block_entries(compiled: Compiled, data: bytes, at: int, end: int) -> list[Span]:
        """The rule's `then` matched entry after entry from `at` (a Secret's later `stringData:`
        values): the accepted `secret` of each."""
        assert compiled.then is not None
        spans: list[Span] = []
        match = compiled.then.match(data, at, end)
        while match is not None and match.end() > at:
            span = group_span(match, "secret")
            if span and compiled.accepts(match, data[span[0] : span[1]].decode("utf-8", "surrogateescape")):
                spans.append(Span(span[0], span[1], compiled.rule.kind))
            at = match.end()
            match = compiled.then.match(data, at, end)
        return spans

    def _copies(self, data: bytes, found: list[Span]) -> list[Span]:
        """Every other occurrence of a recognised value (and of each line of a multi-line one).

        With few distinct values (a session holds a handful of secrets) the whole buffer is
        searched; with many, each value is searched near where it was found: its line and the
        lines around it, where Claude Code repeats it (tool input, tool_result, toolUseResult).
        """
        values = self._values(data, found)
        everywhere = len(values) <= _GLOBAL_COPIES
        copies: list[Span] = []
        lines: Lines | None = None
        for value, (kind, places) in values.items():
            # a short or low-entropy value is only looked for near where it was found: a false
            # positive like `password2` must not spread through a whole file
            whole = (
                everywhere and len(value) >= _GLOBAL_MIN and shannon_entropy(value.decode("utf-8", "replace")) >= 3.2
            )
            if whole:
                ranges = [(0, len(data))]
            else:
                lines = lines or Lines(data)
                ranges = _around(lines, places)
            # where a span of the value starts, a hit adds nothing: the same bytes, or (the value
            # being a multi-line secret's line) a piece of that span
            found_at = set(places)
            for lo, hi in ranges:
                start = data.find(value, lo, hi)
                while start >= 0:
                    end = start + len(value)
                    if start not in found_at and bounded(data, start, end, value):
                        copies.append(Span(start, end, kind))
                    start = data.find(value, end, hi)
        return sorted(copies)

    def _values(self, data: bytes, found: list[Span]) -> dict[bytes, tuple[str, list[int]]]:
        """value -> (kind, every place it was found); each line of a multi-line secret is a value."""
        multiline = {c.rule.kind for c in self._rules if c.rule.multiline}
        values: dict[bytes, tuple[str, list[int]]] = {}
        for span in found:
            value = data[span.start : span.end]
            if span.kind in multiline:
                for fragment in _FRAGMENT_SPLIT.split(value):
                    fragment = fragment.strip(b" \t")
                    if len(fragment) >= _FRAGMENT_MIN and not _PEM_LINE.search(fragment):
                        values.setdefault(fragment, (span.kind, []))[1].append(span.start)
            elif len(value) >= _PROPAGATE_MIN:
                values.setdefault(value, (span.kind, []))[1].append(span.start)
        return values

    # --- JSONL rewriting -----------------------------------------------------------------------

    def _encoded_spans(self, data: bytes, *, jsonl: bool, skipped: _Skipped | None = None) -> list[Span]:
        """Secrets visible only once escapes or base64 are decoded (decoding.py), as spans of `data`.

        Only spans that hold an escape count: the others were seen (or not) undecoded already. A
        base64 block whose decoded text holds a secret is replaced whole. Escapes and blocks are
        looked for in `skipped`'s compact buffer, and what a tool_result content holds is mapped
        into its skipped copy."""
        source = skipped.compact.data if skipped else data
        ranges = encoded_windows(source)
        blocks = base64_blocks(source)
        if skipped and source is not data:
            back = skipped.compact.original_range
            ranges = [back(start, end) for start, end in ranges]
            blocks = [(*back(start, end), text) for start, end, text in blocks]
        windows = [(start, Decoded(data[start:end])) for start, end in ranges]
        if not jsonl:  # plain text's `\"` inside a value: searched as JSONL would hold it
            windows += [(start, Decoded(data[start:end], escape=True)) for start, end in escaped_quote_windows(data)]
        windows = [(start, decoded) for start, decoded in windows if decoded.changed]
        found: list[Span] = []
        # one search over every decoded window, one per line: a search has a fixed cost
        offsets = list(accumulate((len(decoded.data) + 1 for _, decoded in windows), initial=0))
        joined = b"\n".join(decoded.data for _, decoded in windows)
        for span in self._find_spans(joined, jsonl=jsonl) if windows else ():
            i = bisect_right(offsets, span.start) - 1
            start, decoded = windows[i]
            lo, hi = decoded.origin(span.start - offsets[i], min(span.end - offsets[i], len(decoded.data)))
            if hi - lo != span.end - span.start:
                found.append(Span(start + lo, start + hi, span.kind))
        for start, end, text in blocks:
            inner = self._find_spans(text, jsonl=False)
            if inner:  # a secret inside: the whole block goes (its base64 has no piece of its own)
                found.append(Span(start, end, inner[0].kind))
        found = sorted(set(found))
        if skipped and skipped.duplicates and found:
            found = sorted({*found, *into_duplicates(data, found, skipped.duplicates)})
        return found

    def _edit_lines(
        self, data: bytes, found: list[Span], counts: dict[str, int], then: Iterable[Span] = ()
    ) -> tuple[bytes, list[int]]:
        """`data` with the sorted spans replaced line by line (each line stays JSON); changed lines.
        A span of `then` is replaced where it overlaps none of `found`."""
        kept: list[Span] = []
        accept_all(kept, found)  # overlapping spans (a block holding an escape): the first wins
        accept_all(kept, then)
        # a span inside one JSON string is replaced where it stands; only a line holding another
        # span is rewritten whole, to check it still parses (84 of the 17,412 changed lines of the
        # bench's secret-dense corpus: rewriting every one whole cost about 5 % of its redaction)
        placed = [(span, data.rfind(b"\n", 0, span.start) + 1) for span in kept]  # (span, its line's start)
        checked = {line for span, line in placed if not inside_strings(data, (span,))}
        whole = [span for span, line in placed if line in checked]
        direct = [span for span, line in placed if line not in checked]
        edits = _line_edits(data, whole, lambda line, spans: self._rewrite_line(line, spans, counts))
        number, counted_to = 0, 0
        for span in direct:  # inside a string, so no quote in it: the marker alone
            number += data.count(b"\n", counted_to, span.start)
            counted_to = span.start
            edits.append((number, span.start, span.end, marker(span.kind)))
            counts[span.kind] = counts.get(span.kind, 0) + 1
        edits.sort(key=itemgetter(1))
        return splice(data, edits), sorted({number for number, *_ in edits})

    def _rewrite_line(self, line: bytes, spans: list[Span], counts: dict[str, int]) -> bytes | None:
        pieces: list[Any] = []
        done = 0
        for span in spans:
            pieces += (line[done : span.start], replacement(line[span.start : span.end], span.kind))
            done = span.end
        new = b"".join(pieces) + line[done:]
        if not inside_strings(line, spans) and not still_json(line, new):
            return self._redact_decoded(line, counts)
        for span in spans:
            counts[span.kind] = counts.get(span.kind, 0) + 1
        return new

    # --- decoded-text path (custom rules whose patterns mean something else on bytes) ----------

    def _redact_textual(self, data: bytes, counts: dict[str, int]) -> tuple[bytes, list[int]]:
        """Run the rules that need decoded text, on the lines where they match."""
        text = data.decode("utf-8", "surrogateescape")
        hits = sorted(Span(m.start(), m.end(), "") for c in self._textual for m in c.text.finditer(text))
        edits = _line_edits(text, hits, lambda line, _: self._rewrite_text_line(line, counts))
        if not edits:
            return data, []
        return splice(text, edits).encode("utf-8", "surrogateescape"), [number for number, *_ in edits]

    def _rewrite_text_line(self, line: str, counts: dict[str, int]) -> str | None:
        local: dict[str, int] = {}
        new = line
        for compiled in self._textual:
            new = substitute(compiled, new, local)
        if new == line:
            return None
        before, after = line.encode("utf-8", "surrogateescape"), new.encode("utf-8", "surrogateescape")
        if still_json(before, after):
            merge_counts(counts, local)
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
        obj = map_strings(json.loads(body), lambda s: self._redact_string(s, local))
        if not local:
            return None
        merge_counts(counts, local)
        return dump_json(obj) + line[len(body) :]

    def _redact_string(self, value: str, counts: dict[str, int]) -> str:
        new, local = self.redact_text(value)
        merge_counts(counts, local)
        return new

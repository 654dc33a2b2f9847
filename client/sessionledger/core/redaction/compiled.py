"""A rule compiled for the engine: its regex on text and on bytes, its replacement and checks."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache, partial
from typing import Any

from .rules import Rule
from .validators import looks_secret

_KIND_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")
# Verdicts are remembered per name and per (validator, value): a transcript repeats a secret in
# every copy of a tool call and its name (`API_KEY`, `password`) on every line that assigns one,
# and a name check or validator costs tens of microseconds where a lookup costs one tenth of one.
_MEMO_MAX = 4096  # entries per memo before it is emptied (bounded memory)
_MEMO_VALUE_MAX = 256  # longer values (private keys) are checked every time
VETO_BACK = 64  # how far before a secret a rule's `veto_before` looks
_VERDICTS: dict[tuple[Callable[[str], bool], str], bool] = {}


@dataclass(frozen=True)
class Compiled:
    """A rule with its patterns compiled; `index` is its rank (earlier rules win overlaps)."""

    index: int
    rule: Rule
    text: re.Pattern[str]  # for redact_text's textual rules and decoded lines
    raw: re.Pattern[bytes] | None  # for the anchored bytes path; None: searched on decoded text
    lead: bytes
    replacement: bytes
    gap: bytes = b""  # the rule's `lead_gap` bytes
    name: re.Pattern[str] | None = None  # the `name` group must fullmatch this
    then: re.Pattern[bytes] | None = None  # the rule's `then`: the block's later entries
    veto: re.Pattern[str] | None = None  # the rule's `veto_before`
    relax: re.Pattern[str] | None = None  # the rule's `relax_before`
    _names_seen: dict[str | bytes, bool] = field(default_factory=dict, compare=False, repr=False)

    def names(self, match: re.Match[Any]) -> bool:
        """The match's `name` group names a secret (always true for rules without a name check)."""
        if self.name is None:
            return True
        raw = match.group("name")
        if raw is None:
            return False
        seen = self._names_seen.get(raw)
        if seen is None:
            name = raw.decode("utf-8", "surrogateescape") if isinstance(raw, bytes) else raw
            seen = self.name.fullmatch(name) is not None
            if len(self._names_seen) >= _MEMO_MAX:
                self._names_seen.clear()
            self._names_seen[raw] = seen
        return seen

    def accepts(self, match: re.Match[Any], secret: str) -> bool:
        """The rule's name check (when it has one) and validator both pass."""
        if not self.names(match):
            return False
        rule = self.rule
        ok = _accept(rule.validator, secret)
        if not ok and self.relax is not None and rule.relaxed is not None and _accept(rule.relaxed, secret):
            ok = self.relax.search(_before(match, rule.group)) is not None
        return ok and (self.veto is None or self.veto.search(_before(match, rule.group)) is None)


def _before(match: re.Match[Any], group: int | str) -> str:
    """The VETO_BACK characters before the secret (bytes read as Latin-1: the words are ASCII)."""
    start = match.start(group)
    before = match.string[max(0, start - VETO_BACK) : start]
    return before.decode("latin-1") if isinstance(before, bytes) else before


def _accept(validator: Callable[[str], bool] | None, secret: str) -> bool:
    if validator is None:
        return True
    if len(secret) > _MEMO_VALUE_MAX:
        return validator(secret)
    key = (validator, secret)
    verdict = _VERDICTS.get(key)
    if verdict is None:
        verdict = validator(secret)
        if len(_VERDICTS) >= _MEMO_MAX:
            _VERDICTS.clear()
        _VERDICTS[key] = verdict
    return verdict


@cache
def marker(kind: str) -> bytes:
    """What replaces a secret of `kind`: `[REDACTED:<kind>]` (no quote or backslash: a line stays JSON)."""
    return b"[REDACTED:" + kind.encode() + b"]"


def _class_bytes(body: str) -> bytes:
    """The ASCII bytes of the regex class `[body]` (`A-Za-z0-9_`), for `bytes.rstrip`."""
    return bytes(b for b in range(128) if re.fullmatch(f"[{body}]", chr(b))) if body else b""


def compile_rule(index: int, rule: Rule) -> Compiled:
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
    lead, gap = _class_bytes(rule.lead), _class_bytes(rule.lead_gap)
    try:
        name = re.compile(rule.name_pattern) if rule.name_pattern else None
        then = re.compile(rule.then.encode()) if rule.then else None
        veto = re.compile(rule.veto_before) if rule.veto_before else None
        relax = re.compile(rule.relax_before) if rule.relax_before and "{providers}" not in rule.relax_before else None
    except re.error as exc:
        raise ValueError(f"redaction rule {rule.kind!r}: invalid name pattern: {exc}") from exc
    if name is not None and "name" not in text.groupindex:
        raise ValueError(f"redaction rule {rule.kind!r}: a name pattern needs a (?P<name>…) group")
    if then is not None and "secret" not in then.groupindex:
        raise ValueError(f"redaction rule {rule.kind!r}: a `then` pattern needs a (?P<secret>…) group")
    return Compiled(index, rule, text, raw, lead, marker(rule.kind), gap, name, then, veto, relax)


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


def rule_from_mapping(index: int, spec: Any) -> Rule:
    if not isinstance(spec, Mapping) or not isinstance(spec.get("pattern"), str):
        raise ValueError(f"redaction config: extra rule #{index} needs a 'kind' and a 'pattern'")
    kind = spec.get("kind", f"extra_{index}")
    threshold = spec.get("min_entropy")
    validator = partial(looks_secret, threshold=float(threshold)) if threshold is not None else None
    rule = Rule(str(kind), spec["pattern"], spec.get("group", 0), validator)
    compile_rule(0, rule)  # fail early, naming the rule
    return rule


def substitute(compiled: Compiled, text: str, counts: dict[str, int]) -> str:
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

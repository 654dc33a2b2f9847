"""Replace secrets in transcript bytes by `[REDACTED:<kind>]` before anything leaves the machine.

The input is Claude Code JSONL: one compact JSON object per line, so the text a secret sits in is
a JSON string literal. Secrets are matched on the *escaped* line, so every rule stops at `"` and
`\\` (a secret next to `\\n`, `\\"` or `\\\\` ends exactly at the escape) and the replacement holds
neither: a redacted line stays valid JSON. As a safety net, a changed line that no longer parses
(say a custom rule ate a quote) is redacted again string by string on its decoded JSON.

Speed (target >= 50 MB/s): every rule names *anchors*, regexes that start with a literal (sre
finds those at memory speed) and must occur wherever the rule can match. Each anchor is scanned
once over the whole buffer, and the full rule is tried only at its hits (`_match_at`), never over
a whole line of code. Bytes outside the replaced spans are copied through: untouched lines stay
byte-identical.

Generic `*_KEY=`, `*_TOKEN=`, `*_SECRET=` (also `"api_key": "…"`, YAML `token: …`) and
`PASSWORD=`-style assignments are redacted only when the value looks like a secret
(`looks_secret`, `looks_password`): at least `MIN_SECRET_LENGTH` characters, Shannon entropy of at
least `ENTROPY_THRESHOLD` = 3.0 bits per character, and neither a template (`$VAR`, `${VAR}`,
`<…>`), a path, a bare word nor an identifier/dotted name (`settings.API_KEY`,
`PKCS7PrivateKeyTypes`). So `API_KEY=changeme` (2.75 bits/char), `TOKEN=$TOKEN` and
`os.environ["API_KEY"]` stay, while a 32-character random key (~5 bits/char) goes.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from itertools import pairwise
from typing import Any, TypeVar

__all__ = [
    "DEFAULT_RULES",
    "ENTROPY_THRESHOLD",
    "MIN_SECRET_LENGTH",
    "RedactionResult",
    "Redactor",
    "Rule",
    "looks_password",
    "looks_secret",
    "shannon_entropy",
]

# Random keys score 3.5-6 bits per character (hex 4.0, base62 ~5); "changeme" and "password"
# score 2.75, "xxxxxxxx" 0. Short values cannot reach it: log2(len) caps the entropy.
ENTROPY_THRESHOLD = 3.0
MIN_SECRET_LENGTH = 8
_LEAD_MAX = 128  # how far before its anchor a match may start (a long variable name)
_KIND_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_WORDLIKE_RE = re.compile(r"[A-Za-z_][A-Za-z_./:-]*")  # identifier, dotted name, path: no digit
_SEGMENTED_RE = re.compile(r"[A-Za-z0-9]+(?:[._:/-]+[A-Za-z0-9]+)*")
_HEX_RE = re.compile(r"[0-9a-fA-F]+")
_MIN_HEX_LENGTH = 20  # shorter hex strings are ids and short hashes (`"ApiKey": "48205d4ffd7feba3"`)
_NAME_SWITCH_RATIO = 0.3  # random base62/hex switch class at ~40-60% of characters, names below 25%
_DUMMY_PASSWORDS = frozenset({"password", "passwd", "pass", "pwd", "pw", "secret", "changeme", "example", "redacted"})
_PLACEHOLDER_PREFIXES = ("$", "%(", "{", "<", "#", "[REDACTED")
_CONSTANT_RE = re.compile(r"[A-Z]+(?:_[A-Z0-9]+)*")  # `user:DB_PASSWORD@`: a template
_PATH_PREFIXES = ("/", "./", "../", "~/")

# --- pattern building blocks -------------------------------------------------------------------
# Before a token: not inside a longer word or base64 run, except right after a JSON escape
# (`\n`, `\t`, `\u0007`: that `n` is no letter of the text) or an ANSI colour code (`\u001b[32m`).
_START = r"(?:(?<![A-Za-z0-9_+/-])|(?<=\\[nrtbf])|(?<=\\u[0-9a-fA-F]{4})|(?<=[0-9]m))"
_END = r"(?![A-Za-z0-9_+/-])"
_QUOTE = r"""(?:\\*["'])?"""  # an optional quote, backslash-escaped once or more inside JSON
# `name = v`, `name := v`, `name: str = v`, `"name": "v"`, `'name' => v`, YAML `name: v` (a bare
# `name:v` without quote or space is an ARN or URL part: `arn:aws:secretsmanager:…:secret:db-*`).
_SEP = (
    r"""(?:\\*["'][ \t]*(?:=>|:=|=(?!=)|:(?!:))"""
    r"|[ \t]*(?::[ \t]*(?:str|string|String)[ \t]*)?(?:=>|:=|=(?!=))"
    r"|[ \t]*:(?!:)(?=[ \t]))[ \t]*" + _QUOTE
)
_SEP_ANCHOR = _QUOTE + r"[ \t]*[:=]"
_VALUE_END = r"""(?=[\s"'\\,;)}\]&|`<]|$)"""
_NAME_CHARS = "A-Za-z0-9_.-"
_NAME_START = r"(?:(?<![A-Za-z0-9])|(?<=\\[nrtbf]))"
_KEY_QUALIFIER = (
    r"(?i:api|secret|private|access|auth|client|signing|encryption|master|license|app|service"
    r"|consumer|webhook|admin|account|deploy|ssh|hmac|jwt|session)"
)


def _name(words: tuple[str, ...], extra: str = "") -> str:
    """A variable/key name ending in one of `words` (lower, UPPER or CamelCase), e.g. `DB_PASSWORD`,
    `clientSecret`, `x-auth-token`; `monkey` and `bypass` are not."""
    variants = "|".join(words) + "|" + "|".join(w.upper() for w in words)
    camel = "|".join(w.capitalize() for w in words)
    return _NAME_START + rf"(?:[A-Za-z0-9]+[_.-])*(?:{extra}{variants}|[A-Za-z0-9]*(?:{camel}))"


_SECRET_NAME = _name(("token", "secret"), rf"{_KEY_QUALIFIER}[_.-]?(?:key|Key|KEY)|KEY|")
_PASSWORD_NAME = _name(("password", "passwd", "pass", "pwd"))
# A quoted value may hold any character but its quote (Django keys have `&`, `%`, `(`); a bare
# value stops at shell/code punctuation, so `os.environ["KEY"]` and `get_token()` never match.
_ASSIGNED_VALUE = (
    _SEP
    + r"""(?P<secret>(?<=")[^"'\\\s]{8,4096}(?=\\*")|(?<=')[^"'\\\s]{8,4096}(?=\\*')"""
    + r"""|(?<!["'])[^\s"'\\$<>{}()\[\],;|&`%]{8,4096}"""
    + _VALUE_END
    + ")"
)
# Anchors start with a literal so that sre scans for them at memory speed; rules that share
# a first literal share one scan (each scan of a 20 MB buffer costs ~15 ms here).
# Scans cost more when the first literal byte is common ("t", "s", "e"): `ke[yn]` finds the ends
# of key and token, `cret` of secret; the `lead` (name characters) reaches back to the start.
_GENERIC_ANCHORS = (r"ke[yn]" + _SEP_ANCHOR, r"cret" + _SEP_ANCHOR)
_PASSWORD_ANCHOR = r"p(?:ass(?:w(?:or)?d)?|wd)" + _SEP_ANCHOR
_A_ANCHOR = r"A(?:KIA|SIA|BIA|CCA|Iza)"  # AWS key ids, Google API keys
_G_ANCHOR = r"g(?:h[pousr]_|ithub_pat_|l(?:pat|dt|rt|ptt|ft|soat|cbt)-)"  # GitHub, GitLab
_SK_ANCHOR = r"k(?:-|_(?:live|test)_)"  # sk-… (OpenAI, Anthropic), sk_/rk_live_ (Stripe); lead "rs"
_URL_ANCHOR = r"://(?:hooks\.slack\.com/|[^\s/@\"\\:]{0,128}:[^\s/@\"\\]{1,256}@)"


def shannon_entropy(text: str) -> float:
    """Bits per character of `text` (0.0 for ""): random secrets score high, words low."""
    if not text:
        return 0.0
    size = len(text)
    return -sum(n / size * math.log2(n / size) for n in Counter(text).values())


def looks_secret(value: str, threshold: float = ENTROPY_THRESHOLD) -> bool:
    """Whether an assigned value is a secret rather than code, a placeholder or a path.

    Assignments in code mostly hold names (`get_token`, `settings.API_KEY`), templates
    (`${TOKEN}`, `<your key>`), dummies (`changeme`, `xxxx`) or paths, while a random key almost
    always has a digit and high per-character entropy.
    """
    if not _literal(value) or _name_like(value):
        return False
    if len(value) < _MIN_HEX_LENGTH and _HEX_RE.fullmatch(value):
        return False
    return shannon_entropy(value) >= threshold


def looks_password(value: str, threshold: float = ENTROPY_THRESHOLD) -> bool:
    """Like `looks_secret`, but a single word with digits (`Summer2024`) counts: people pick those.

    Still skipped: names with separators (`settings.DB_PASSWORD`), bare words, dummies.
    """
    if not _literal(value) or value.lower() in _DUMMY_PASSWORDS:
        return False
    if not value.isalnum() and _name_like(value):
        return False
    return shannon_entropy(value) >= threshold


def _literal(value: str) -> bool:
    """Long enough, no template (`${X}`, `<key>`, `%(x)s`, `{{ x }}`), no path, no bare word."""
    if len(value) < MIN_SECRET_LENGTH or value.startswith(_PLACEHOLDER_PREFIXES + _PATH_PREFIXES):
        return False
    if "${" in value or "{{" in value:
        return False
    return not _WORDLIKE_RE.fullmatch(value)


def _name_like(value: str) -> bool:
    """Identifier segments that rarely switch letter case/digits: `fs.s3.consistent`,
    `PKCS7PrivateKeyTypes`, `ed25519.Ed25519PrivateKey`; random keys switch at almost every other
    character (lower-to-upper inside CamelCase is not counted)."""
    if not _SEGMENTED_RE.fullmatch(value):
        return False
    alnum = [c for c in value if c.isalnum()]
    classes = ["d" if c.isdigit() else "u" if c.isupper() else "l" for c in alnum]
    switches = sum(1 for a, b in pairwise(classes) if a != b and (a, b) != ("u", "l"))
    return switches < _NAME_SWITCH_RATIO * max(1, len(alnum) - 1)


def _random_token(value: str) -> bool:
    """Mixed case, a digit and high entropy: tells an `sk-…` key from `sk-learn-estimator`."""
    mixed = any(c.isdigit() for c in value) and any(c.islower() for c in value) and any(c.isupper() for c in value)
    return mixed and shannon_entropy(value) >= 3.5


def _has_digit(value: str) -> bool:
    """Real Slack tokens carry numeric team/user ids; `xoxb-your-token-here` does not."""
    return any(c.isdigit() for c in value)


def _not_aws_example(value: str) -> bool:
    """AWS documentation keys (…EXAMPLE) are not secrets."""
    return not value.endswith("EXAMPLE")


def _url_password(value: str) -> bool:
    """`postgres://u:${DB_PASSWORD}@h`, `:%(pw)s@`, `:****@`, `user:pass@` are examples."""
    if value.startswith(_PLACEHOLDER_PREFIXES) or value.lower() in _DUMMY_PASSWORDS:
        return False
    return value.strip("*xX.") != "" and not _CONSTANT_RE.fullmatch(value)


def _pem_body(value: str) -> bool:
    """A key has a body; a bare header (`startswith("-----BEGIN RSA PRIVATE KEY-----")`) is code."""
    body = re.sub(r"-----[A-Z0-9 ]+-----|\\[nrt]|\\\\|[^A-Za-z0-9+/]", "", value)
    return len(body) >= 64


@dataclass(frozen=True)
class Rule:
    """One kind of secret.

    `pattern` is matched against the escaped JSONL line; `group` (index or name) is the span that
    is replaced; `validator`, given that span's text, may veto a match.

    For speed, `anchors` (on the raw bytes) and `lower_anchors` (on the ASCII-lowercased bytes)
    are regexes starting with a literal, one of which occurs in every match; a match may start at
    most `lead`-class characters before its anchor. A rule with anchors is matched on the raw
    UTF-8 bytes. A rule without any is its own anchor when its pattern means the same on bytes
    and text (ASCII literals and positive classes); otherwise it is searched on decoded text.
    """

    kind: str
    pattern: str
    group: int | str = 0
    validator: Callable[[str], bool] | None = field(default=None, compare=False)
    anchors: tuple[str, ...] = ()
    lower_anchors: tuple[str, ...] = ()
    lead: str = ""


DEFAULT_RULES: tuple[Rule, ...] = (
    Rule(
        "private_key",
        r"-----BEGIN[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[A-Za-z0-9+/=:,. \t]|-(?!----)|\\[nrt]|\\\\)*"
        r"(?:-----END[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----)?",
        validator=_pem_body,
        anchors=(r"-----BEGIN",),
    ),
    Rule(
        "jwt",
        _START + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*" + _END,
        anchors=(r"J[A-Za-z0-9_-]{8,}\.eyJ",),  # "J" is rarer than "e" and scans faster
        lead="ey",
    ),
    Rule(
        "aws_access_key",
        _START + r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])",
        validator=_not_aws_example,
        anchors=(_A_ANCHOR,),
    ),
    Rule(
        "aws_secret_key",
        _NAME_START
        + r"(?i:aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key)"
        + _SEP
        + r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        group="secret",
        lower_anchors=(_GENERIC_ANCHORS[0],),
        lead=_NAME_CHARS,
    ),
    Rule(
        "github",
        _START + r"(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,251})" + _END,
        anchors=(_G_ANCHOR,),
    ),
    Rule(
        "gitlab",
        _START + r"gl(?:pat|dt|rt|ptt|ft|soat|cbt)-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]+)*" + _END,
        anchors=(_G_ANCHOR,),
    ),
    Rule(
        "slack",
        _START + r"(?:xox[abprse]-|xapp-)[A-Za-z0-9-]{10,}" + _END,
        validator=_has_digit,
        anchors=(r"x(?:ox[abprse]|app)-",),
    ),
    Rule(
        "slack_webhook",
        r"://hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/+-]{20,})",
        group="secret",
        anchors=(_URL_ANCHOR,),
    ),
    Rule(
        "stripe",
        _START + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}" + _END,
        anchors=(_SK_ANCHOR,),
        lead="rs",
    ),
    Rule("anthropic", _START + r"sk-ant-[A-Za-z0-9_-]{32,}" + _END, anchors=(_SK_ANCHOR,), lead="rs"),
    Rule(
        "openai",
        _START + r"sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}" + _END,
        validator=_random_token,
        anchors=(_SK_ANCHOR,),
        lead="rs",
    ),
    Rule("google_api_key", _START + r"AIza[A-Za-z0-9_-]{35}" + _END, anchors=(_A_ANCHOR,)),
    Rule(
        "url_password",
        r"[A-Za-z][A-Za-z0-9+.-]{0,20}://[^\s:/?#@\"'\\<>\[\]]{0,128}"
        r":(?P<secret>[^\s:/?#@\"'\\<>\[\]]{1,256})@(?=[A-Za-z0-9\[])",
        group="secret",
        validator=_url_password,
        anchors=(_URL_ANCHOR,),
        lead="A-Za-z0-9+.-",
    ),
    Rule(
        "bearer",
        r"(?i:authorization)" + _SEP + r"(?i:bearer)[ \t]+(?P<secret>[A-Za-z0-9._~+/-]{12,}=*)(?![A-Za-z0-9._~+/=-])",
        group="secret",
        validator=looks_secret,
        lower_anchors=(r"authorization",),
    ),
    Rule(
        "basic_auth",
        r"(?i:authorization)" + _SEP + r"(?i:basic)[ \t]+(?P<secret>[A-Za-z0-9+/]{8,}=*)(?![A-Za-z0-9+/=])",
        group="secret",
        validator=looks_secret,
        lower_anchors=(r"authorization",),
    ),
    Rule(
        "password",
        _PASSWORD_NAME + _ASSIGNED_VALUE,
        group="secret",
        validator=looks_password,
        lower_anchors=(_PASSWORD_ANCHOR,),
        lead=_NAME_CHARS,
    ),
    Rule(
        "generic_secret",
        _SECRET_NAME + _ASSIGNED_VALUE,
        group="secret",
        validator=looks_secret,
        lower_anchors=_GENERIC_ANCHORS,
        lead=_NAME_CHARS,
    ),
)


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
    rule: Rule
    text: re.Pattern[str]  # for redact_text and decoded lines
    raw: re.Pattern[bytes] | None  # for the anchored bytes path; None: searched on decoded text
    anchors: tuple[tuple[bytes, bool], ...]  # (pattern, on lowercased bytes)
    lead: bytes
    replacement: str


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
        off = set(disabled)
        chosen = [r for r in (DEFAULT_RULES if rules is None else tuple(rules)) if r.kind not in off]
        # Extra rules run before the generic catch-all so that they claim their own kind.
        generic = [r for r in chosen if r.kind == "generic_secret"]
        ordered = [r for r in chosen if r.kind != "generic_secret"] + list(extra) + generic
        self._rules = tuple(_compile(rule) for rule in ordered)
        self._anchored = tuple(c for c in self._rules if c.raw is not None)
        self._textual = tuple(c for c in self._rules if c.raw is None)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(c.rule.kind for c in self._rules)

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

    def redact_text(self, text: str) -> tuple[str, dict[str, int]]:
        """Redact one text (any text, not only JSONL) with every rule; returns (text, counts)."""
        counts: dict[str, int] = {}
        for compiled in self._rules:
            text = _sub(compiled, text, counts)
        return text, counts

    def redact_bytes(self, data: bytes) -> RedactionResult:
        """Redact JSONL bytes; lines without a secret are copied through byte-identical."""
        counts: dict[str, int] = {}
        edits = self._anchored_edits(data, counts)
        data = _splice(data, edits)
        changed = {number for number, *_ in edits}
        if self._textual:
            data, numbers = self._redact_textual(data, counts)
            changed.update(numbers)
        return RedactionResult(data, counts, sorted(changed))

    # --- anchored bytes path -------------------------------------------------------------------

    def _find_spans(self, data: bytes) -> list[_Span]:
        """Secret spans of all anchored rules; an earlier rule wins where two overlap."""
        hits = _AnchorHits(data)
        accepted: list[_Span] = []
        starts: list[int] = []
        for compiled in self._anchored:
            for span in self._rule_spans(compiled, data, hits.positions(compiled.anchors)):
                i = bisect.bisect_left(starts, span.start)
                if (i and accepted[i - 1].end > span.start) or (i < len(starts) and accepted[i].start < span.end):
                    continue  # already inside a secret found by a more specific rule
                starts.insert(i, span.start)
                accepted.insert(i, span)
        return accepted

    def _rule_spans(self, compiled: _Compiled, data: bytes, positions: list[int]) -> list[_Span]:
        """Matches of one rule at its anchor hits, left to right, never overlapping (like re.sub)."""
        spans: list[_Span] = []
        consumed = 0
        rule = compiled.rule
        for pos in positions:
            if pos < consumed:
                continue
            match = _match_at(compiled, data, pos, consumed)
            if match is None:
                continue
            consumed = max(match.end(), match.start() + 1)
            secret = match.group(rule.group)
            if secret and _accept(rule, secret.decode("utf-8", "surrogateescape")):
                start, end = match.span(rule.group)
                spans.append(_Span(start, end, rule.kind))
        return spans

    def _anchored_edits(self, data: bytes, counts: dict[str, int]) -> list[_Edit[bytes]]:
        """(line number, start, end, new line) for every line holding an accepted secret."""
        edits: list[_Edit[bytes]] = []
        number, counted_to = 0, 0
        for start, end, spans in _group_by_line(data, self._find_spans(data)):
            number += data.count(b"\n", counted_to, start)
            counted_to = start
            relative = [(s.start - start, s.end - start, s.kind) for s in spans]
            new = self._rewrite_line(data[start:end], relative, counts)
            if new is not None:
                edits.append((number, start, end, new))
        return edits

    def _rewrite_line(self, line: bytes, spans: list[tuple[int, int, str]], counts: dict[str, int]) -> bytes | None:
        pieces, done = [], 0
        for start, end, kind in spans:
            pieces += (line[done:start], b"[REDACTED:" + kind.encode() + b"]")
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


# --- helpers -----------------------------------------------------------------------------------


class _AnchorHits:
    """Anchor scans over the whole buffer, shared between rules with the same anchor."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._lower: bytes | None = None
        self._cache: dict[tuple[bytes, bool], list[int]] = {}

    def positions(self, anchors: tuple[tuple[bytes, bool], ...]) -> list[int]:
        found: set[int] = set()
        for key in anchors:
            if key not in self._cache:
                pattern, lowered = key
                self._cache[key] = [m.start() for m in re.finditer(pattern, self._haystack(lowered))]
            found.update(self._cache[key])
        return sorted(found)

    def _haystack(self, lowered: bool) -> bytes:
        if not lowered:
            return self._data
        if self._lower is None:
            self._lower = self._data.lower()  # ASCII-only, so offsets are unchanged
        return self._lower


def _match_at(compiled: _Compiled, data: bytes, pos: int, floor: int) -> re.Match[bytes] | None:
    """The leftmost match starting between the `lead` run before `pos` and `pos` itself.

    Anchored `match` calls cost the length of a match, whereas a `search` from the anchor would
    scan the rest of a (possibly 100 KB) line whenever the rule fails at this anchor.
    """
    assert compiled.raw is not None
    end = data.find(b"\n", pos)
    end = len(data) if end < 0 else end
    lo = pos
    if compiled.lead:
        before = data[max(floor, pos - _LEAD_MAX) : pos]
        lo = pos - (len(before) - len(before.rstrip(compiled.lead)))
    for start in range(lo, pos + 1):
        match = compiled.raw.match(data, start, end)
        if match is not None:
            return match
    return None


def _accept(rule: Rule, secret: str) -> bool:
    return rule.validator is None or rule.validator(secret)


def _compile(rule: Rule) -> _Compiled:
    """Compile a rule, turning every problem into a ValueError that names it."""
    if not isinstance(rule.kind, str) or not _KIND_RE.fullmatch(rule.kind):
        raise ValueError(f"redaction rule {rule.kind!r}: kind must match [A-Za-z0-9_.-]{{1,64}}")
    try:
        text = re.compile(rule.pattern)
        raw, anchors = _raw_and_anchors(rule)
    except (re.error, TypeError, UnicodeEncodeError) as exc:
        raise ValueError(f"redaction rule {rule.kind!r}: invalid pattern: {exc}") from exc
    group = rule.group
    if (isinstance(group, int) and not 0 <= group <= text.groups) or (
        isinstance(group, str) and group not in text.groupindex
    ):
        raise ValueError(f"redaction rule {rule.kind!r}: pattern has no group {group!r}")
    lead = bytes(b for b in range(128) if re.fullmatch(f"[{rule.lead}]", chr(b))) if rule.lead else b""
    return _Compiled(rule, text, raw, anchors, lead, f"[REDACTED:{rule.kind}]")


def _raw_and_anchors(rule: Rule) -> tuple[re.Pattern[bytes] | None, tuple[tuple[bytes, bool], ...]]:
    anchors = tuple((a.encode("ascii"), False) for a in rule.anchors)
    anchors += tuple((a.encode("ascii"), True) for a in rule.lower_anchors)
    for pattern, _ in anchors:
        re.compile(pattern)
    if anchors:
        return re.compile(rule.pattern.encode("ascii")), anchors
    if _bytes_safe(rule.pattern):
        raw = re.compile(rule.pattern.encode("ascii"))
        return raw, ((raw.pattern, False),)
    return None, ()


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
    _compile(rule)  # fail early, naming the rule
    return rule


def _sub(compiled: _Compiled, text: str, counts: dict[str, int]) -> str:
    """One rule over `text`, replacing only the secret group of accepted matches."""
    rule, replacement = compiled.rule, compiled.replacement

    def replace(match: re.Match[str]) -> str:
        secret = match.group(rule.group)
        if not secret or not _accept(rule, secret):
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
        start = buf.rfind(newline, 0, spans[i].start) + 1  # type: ignore[arg-type]
        end = buf.find(newline, spans[i].start)  # type: ignore[arg-type]
        end = len(buf) if end < 0 else end
        j = i
        while j < len(spans) and spans[j].start < end:
            j += 1
        yield start, end, spans[i:j]
        i = j


def _splice(buf: _Buf, edits: list[tuple[int, int, int, Any]]) -> Any:
    """`buf` with the (number, start, end, new) edits applied; everything else copied as is."""
    if not edits:
        return buf
    pieces, done = [], 0
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

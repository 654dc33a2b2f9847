"""The merged scans: every rule's anchors grouped by leading literal, one regex per group.

See engine.py for why: a scan finds its literal at memory speed and tests cheap gates and a
lookahead there, so a rule's full regex runs only at the rare positions where it can match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .compiled import Compiled
from .rules import FRAGMENTS, Rule
from .search import matches

_TOKEN_START = FRAGMENTS["START"]
_NEAR_BACK = 512  # how far before an anchor a `near` word may be
# bytes by how common they are in transcripts (JSON, code, English prose), most common first: a scan
# of a longer key searches from its rarest byte (_lead)
_COMMON = b' etaoinsrhl"dc:u/mpfgywb.,_-'
_CLASS_ESCAPES = {"n": "\n", "r": "\r", "t": "\t"}  # the escapes a class of ours spells


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
    lead: int = 0  # where in the key the scan's search starts (_lead)
    literals: list[tuple[str, str, _Anchor | None]] = field(default_factory=list)  # (literal, rest, proto)
    free: list[_Anchor] = field(default_factory=list)
    by_head: dict[int, dict[bytes, list[_Anchor]]] = field(default_factory=dict)
    scan: re.Pattern[bytes] | None = None
    # the headed anchors by the head's last two bytes (a one-byte head by its byte): at a hit one
    # lookup finds the few heads to compare instead of one slice per head width
    by_suffix: dict[bytes, list[tuple[bytes, list[_Anchor]]]] = field(default_factory=dict)
    # the free anchors by the byte after the literal (key 256: the buffer's end): at a hit only
    # the anchors whose rest can start with that byte are tried, not every one of the group
    free_by_byte: dict[int, list[_Anchor]] = field(default_factory=dict)
    # where that byte leaves several anchors, they by the byte after it, and those any byte may follow
    free_by_two: dict[int, tuple[dict[int, list[_Anchor]], list[_Anchor]]] = field(default_factory=dict)


class Haystack:
    """The raw bytes and, made once when first needed, their ASCII-lowercased copy."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._lower: bytes | None = None

    @property
    def lower(self) -> bytes:
        if self._lower is None:
            self._lower = self.data.lower()  # ASCII-only, so offsets are unchanged
        return self._lower


def build_groups(rules: tuple[Compiled, ...]) -> tuple[_Group, ...]:
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
    _fold(groups)
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


def _fold(groups: dict[tuple[str, bool], _Group]) -> None:
    """Move a lowercase group whose every literal holds another lowercase group's key into that
    group, pivoted on the key (`oken…` → `ke` with `o` before it; `kind: secret` → `cre`): each
    scan is a pass over the whole buffer, a head checked behind a key costs only at its hits."""
    for name, group in sorted(groups.items()):
        if not name[1]:
            continue
        others = [(k, g) for k, g in groups.items() if k[1] and k != name]
        targets = {k: _common_prefix([lit for lit, _, _ in g.literals]) for k, g in others}
        moves: list[tuple[tuple[str, bool], str, str, _Anchor]] = []
        for literal, rest, proto in group.literals:
            assert proto is not None
            target = next(((k, key) for k, key in targets.items() if key and literal.find(key) > 0), None)
            if target is None or proto.head:
                break
            at = literal.find(target[1])
            head = literal[:at].encode()
            moves.append((target[0], literal[at:], rest, _Anchor(proto.rule, head, None, proto.near, proto.context)))
        else:
            for target_name, literal, rest, anchor in moves:
                groups[target_name].literals.append((literal, rest, anchor))
            del groups[name]


def _add_prefix(
    groups: dict[tuple[str, bool], _Group], keys: dict[tuple[str, bool], str], compiled: Compiled, prefix: str
) -> None:
    """Anchor a provider prefix on the cheapest scan: a separator, `A`, an existing lowercase scan,
    or (last resort) the prefix itself."""
    follow = compiled.rule.follow
    if "A" in prefix:
        return _add_pivot(groups, compiled, prefix, prefix.index("A"), "A", False, follow)
    for i, char in enumerate(prefix):
        if char in "_-.~":
            return _add_pivot(groups, compiled, prefix, i, char, False, follow)
    lower = prefix.lower()
    found = [(key, lower.index(key)) for (_first, lowered), key in keys.items() if lowered and key in lower]
    # rather a key the word goes on after (`c` + `lickup`, not `clicku` + `p`): the bytes after it
    # turn the key's hits away first, where a head is tested at every hit (_compile_group)
    found.sort(key=lambda pivot: pivot[1] + len(pivot[0]) == len(lower))
    if found:
        return _add_pivot(groups, compiled, prefix, found[0][1], found[0][0], True, follow)
    return _add_pivot(groups, compiled, prefix, 0, prefix, False, follow)


def _add_pivot(
    groups: dict[tuple[str, bool], _Group],
    compiled: Compiled,
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
        lit, after = _literal_prefix(full)
        if group.lowered and proto.head and lit:
            # a word pivoted on a common key (`anthro` + `p` + `ic`): its rest's literal turns
            # most of the key's hits away in its bucket, and the head is checked behind it only
            # there, where a head branch would test every hit's bytes before the key
            behind = re.escape(proto.head.decode() + key + lit)
            full = f"{re.escape(lit)}(?<={behind}){after}"
            group.free.append(_Anchor(proto.rule, proto.head, re.compile(full.encode()), proto.near, proto.context))
            free.append(full)
            continue
        anchor = _Anchor(proto.rule, proto.head, re.compile(full.encode()) if full else None, proto.near, proto.context)
        if anchor.head:
            group.by_head.setdefault(len(anchor.head), {}).setdefault(anchor.head, []).append(anchor)
            headed.setdefault(full, set()).add(proto.head.decode())
        else:
            group.free.append(anchor)
            (bounded if proto.boundary and full else free).append(full)
    group.free = _merge_by_rule(group.free)
    group.free_by_byte = _by_first_byte(group.free)
    group.free_by_two = _by_second_byte(group.free_by_byte)
    for width_heads in group.by_head.values():
        for head_bytes, anchors in width_heads.items():
            group.by_suffix.setdefault(head_bytes[-2:], []).append((head_bytes, anchors))
    branches = []
    if headed:
        branches.append(_headed_branch(headed, key))
    if bounded:
        k = re.escape(key)
        start = (
            rf"(?:(?<![A-Za-z0-9_+/-]{k})|(?<=\\[nrtbf]{k})|(?<=\\u[0-9a-fA-F]{{4}}{k})"
            rf"|(?<=[\[;][0-9]m{k})|(?<=[\[;][0-9]{{2}}m{k}))"
        )
        # the bytes after the key first: most of a common key's hits (`c` of `ci…`) fail there,
        # before the token start's five lookbehinds are tried
        branches.append(_ahead(_flatten(bounded)) + start)
    if free:
        branches.append(_ahead(_flatten(free)))
    look = "" if "" in free else "(?:" + "|".join(branches) + ")"
    group.lead = _lead(key)
    # the search runs from the key's rarest byte (`uth` of `auth`), the rest of the key behind it
    search = re.escape(key[group.lead :]) + (f"(?<={re.escape(key)})" if group.lead else "")
    group.scan = re.compile((search + look).encode())


def _lead(key: str) -> int:
    """Where in `key` its rarest byte is (the first of equals): sre finds a literal by its first
    byte and checks the rest at each of that byte's places, so a common first byte costs."""
    ranks = [len(_COMMON) if (at := _COMMON.find(char.encode())) < 0 else at for char in key]
    return ranks.index(max(ranks))


def _headed_branch(headed: dict[str, set[str]], key: str) -> str:
    """The scan branch of the anchors with a head: the heads' gate, then each head with its own rests."""
    suffixes = sorted({h for heads in headed.values() for h in heads})
    # each head with its own rests: a head passing with another head's rest would let the scan
    # stop at every `_` after `new` or `.` after `ms` once the catalogue's many heads are in
    by_head: dict[str, list[str]] = {}
    for rest, heads in headed.items():
        for head in heads:
            by_head.setdefault(head, []).append(rest)
    k = re.escape(key)
    # the pairs by the head's last byte, one lookbehind for that byte before them: a key after
    # a one-byte head (`s.`) tries the few heads ending in `s`, not every head of the group
    by_last: dict[str, list[str]] = {}
    for h, r in sorted(by_head.items()):
        by_last.setdefault(h[-1], []).append(f"(?<={re.escape(h)}{k}){_ahead(_flatten(r))}")
    pairs = "|".join(
        same[0] if len(same) == 1 else f"(?<={re.escape(last)}{k})(?:{'|'.join(same)})"
        for last, same in by_last.items()
    )
    return _behind(suffixes, key) + f"(?:{pairs})"


def _by_first_byte(anchors: list[_Anchor]) -> dict[int, list[_Anchor]]:
    firsts: list[set[int] | None] = []
    for anchor in anchors:
        # a merged rest is a top-level alternation (`(?:a…)|(?:b…)`): each alternative counts
        found: set[int] | None = set()
        for alternative in _split_alternatives(anchor.rest.pattern.decode("latin-1")) if anchor.rest else [""]:
            chars = _first_chars(alternative)
            if chars is None or found is None:
                found = None
                break
            found |= {ord(c) for c in chars}
        firsts.append(found)
    return {
        byte: [a for a, first in zip(anchors, firsts, strict=True) if first is None or byte in first]
        for byte in range(257)
    }


def _by_second_byte(
    by_byte: dict[int, list[_Anchor]],
) -> dict[int, tuple[dict[int, list[_Anchor]], list[_Anchor]]]:
    """For each first byte that leaves two anchors or more: the anchors by the byte after it (in
    their order), and those whose second byte is not simple to tell. A secret-dense buffer holds a
    `token` or `key` in every other line; most of their anchors are turned away here, not each by a
    regex call."""
    out: dict[int, tuple[dict[int, list[_Anchor]], list[_Anchor]]] = {}
    follows: dict[_Anchor, dict[int, set[int]] | None] = {}
    for first, anchors in by_byte.items():
        if first == 256 or len(anchors) < 2:
            continue
        for anchor in anchors:
            if anchor not in follows:
                follows[anchor] = _second_bytes(anchor)
        seconds = [(follows[anchor] or {}).get(first) for anchor in anchors]
        known = {byte for found in seconds if found is not None for byte in found}
        if not known:
            continue
        table = {
            byte: [a for a, found in zip(anchors, seconds, strict=True) if found is None or byte in found]
            for byte in known
        }
        out[first] = (table, [a for a, found in zip(anchors, seconds, strict=True) if found is None])
    return out


def _second_bytes(anchor: _Anchor) -> dict[int, set[int]] | None:
    """By the byte the anchor's rest can start with, the bytes that can follow it; None when that
    is not simple to tell."""
    if anchor.rest is None:
        return None
    found: dict[int, set[int]] = {}
    for alternative in _split_alternatives(anchor.rest.pattern.decode("latin-1")):
        options = _literal_alternatives(alternative)
        if options is None:
            return None
        for option in options:
            literal, after = _literal_prefix(option)
            chars = {literal[1]} if len(literal) > 1 else _first_chars(after)
            if chars is None:
                return None
            found.setdefault(ord(literal[0]), set()).update(ord(c) for c in chars)
    return found


def _merge_by_rule(anchors: list[_Anchor]) -> list[_Anchor]:
    """One anchor per (rule, near, context): their rests joined, so a hit tests each rule once."""
    merged: dict[tuple[int, bytes, tuple[bytes, ...], bool], list[_Anchor]] = {}
    for anchor in anchors:
        merged.setdefault((anchor.rule, anchor.head, anchor.near, anchor.context), []).append(anchor)
    out = []
    for (rule, head, near, context), same in merged.items():
        if any(a.rest is None for a in same):
            rest = None
        else:
            rests = list(dict.fromkeys(a.rest.pattern for a in same if a.rest is not None))
            rest = re.compile(rests[0] if len(rests) == 1 else b"|".join(b"(?:" + r + b")" for r in rests))
        out.append(_Anchor(rule, head, rest, near, context))
    return out


def _behind(heads: list[str], key: str) -> str:
    """Lookbehinds for `head + key`, checking the head's last (up to) four characters: a class per
    character first (cheap: most `_` of a source file fail it, the more so the more characters are
    checked once the catalogue's heads are in), then the exact suffixes."""
    tail = re.escape(key)
    suffixes = sorted({h[-4:] for h in heads})
    # one class for the byte before the key first: it alone turns away most of a frequent key's
    # occurrences (`.` after `f` in `self.`), where the branch below costs one lookbehind per width
    last = "".join(re.escape(c) for c in sorted({h[-1] for h in heads}))
    parts = []
    for width in (4, 3, 2, 1):
        chosen = [s for s in suffixes if len(s) == width]
        if not chosen:
            continue
        gate = "".join("[" + "".join(re.escape(c) for c in sorted({s[i] for s in chosen})) + "]" for i in range(width))
        exact = "|".join(_trie([(s, "") for s in chosen]))
        parts.append(f"(?<={gate}{tail})(?<=(?:{exact}){tail})")
    return f"(?<=[{last}]{tail})(?:" + "|".join(parts) + ")"


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
    starts = [_literal_starts(rest) for rest in rests]
    if all(found and min(map(len, found)) >= 2 for found in starts):
        # every rest starts with a literal of two characters or more (`ass…`, `wd`): a lookahead
        # for those literals turns a hit away at its second byte (`pa` in `path` is not `pass`)
        literals = sorted({lit for found in starts if found for lit in found})
        gate = "(?=" + "|".join(re.escape(lit) for lit in literals) + ")"
        return gate + "(?=" + "|".join(f"(?:{r})" for r in rests) + ")"
    firsts: set[str] = set()
    for rest in rests:
        chars = _first_chars(rest)
        if chars is None:
            firsts = set()
            break
        firsts |= chars
    gate = "(?=[" + "".join(re.escape(c) for c in sorted(firsts)) + "])" if firsts else ""
    return gate + "(?=" + _by_first_literal(rests) + ")"


def _by_first_literal(rests: list[str]) -> str:
    """The alternatives of `rests` as a trie of their leading literals: those starting with the same
    character behind it once, and so on down (`ass…` and `agerduty` after `p` share their `a`). sre
    tries an alternation's branches one by one; a branch that starts with a literal other than the
    byte at hand is skipped in one test, so a hit of a common key tries a branch per distinct next
    byte, not one per rest. The scan uses this only as a yes/no gate: the order is free."""
    literal: list[tuple[str, str]] = []
    others: list[str] = []
    for rest in rests:
        for alternative in _literal_alternatives(rest) or [rest]:
            lit, after = _literal_prefix(alternative)
            if lit:
                literal.append((lit, after))
            else:
                others.append(f"(?:{alternative})")
    return "|".join([*_trie(literal), *others])


def _trie(items: list[tuple[str, str]]) -> list[str]:
    """Alternatives for (literal, regex after it) pairs, each distinct first character once."""
    buckets: dict[str, list[tuple[str, str]]] = {}
    for lit, after in dict.fromkeys(items):
        buckets.setdefault(lit[:1], []).append((lit[1:], after))
    out: list[str] = []
    for first, same in buckets.items():
        if not first:  # the literal ended here: what follows it, as written
            out.extend(f"(?:{after})" if after else "" for _, after in same)
            continue
        inner = _trie(same)
        out.append(re.escape(first) + (inner[0] if len(inner) == 1 else "(?:" + "|".join(inner) + ")"))
    return out


def _literal_alternatives(regex: str) -> list[str] | None:
    """`regex` as alternatives that each start with a literal, or None: `(?:ass|wd)s?[ \\t]` gives
    `ass…` and `wd…`, `[yn]…` gives `y…` and `n…`. In a scan's alternation an alternative that starts
    with a group or a class is tried at every hit of the key; one that starts with a literal only
    where that byte follows, in its bucket."""
    if _literal_prefix(regex)[0]:
        return [regex]
    if len(_split_alternatives(regex)) != 1:
        return None
    if regex.startswith("["):  # a class of a few characters, once
        chars, end = _class_chars(regex), regex.find("]", 2) + 1
        if chars is None or len(chars) > 4 or regex[end : end + 1] in ("?", "*", "+", "{"):
            return None
        return [re.escape(c) + regex[end:] for c in sorted(chars)]
    close = _closing_paren(regex, 0) if regex.startswith("(?:") else None
    if close is None or regex[close + 1 : close + 2] in ("?", "*", "+", "{"):
        return None
    out: list[str] = []
    for alternative in _split_alternatives(regex[3:close]):
        found = _literal_alternatives(alternative + regex[close + 1 :])
        if found is None:
            return None
        out.extend(found)
    return out


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
    # an optional first character (`x?`, `x*`, `\\{0,3}`): it, or what follows it
    atom = 2 if regex[0] == "\\" and len(regex) > 1 and not regex[1].isalnum() else 1
    if atom == 1 and regex[0] in ".^$*+?{}[]|()\\":
        return None
    optional = re.match(r"[?*]|\{0,\d*\}", regex[atom:])
    if optional is None:
        return None
    found = _first_chars(regex[atom + optional.end() :])
    return None if found is None else found | {regex[atom - 1]}


def _literal_starts(regex: str, width: int = 3) -> set[str] | None:
    """Literals (up to `width` characters) one of which every match of `regex` starts with, or None."""
    if regex.startswith("(?:"):
        close = _closing_paren(regex, 0)
        if close is None:
            return None
        after = regex[close + 1 :]
        if after[:1] in ("?", "*", "+", "{"):
            return None
        found: set[str] = set()
        for alternative in _split_alternatives(regex[3:close]):
            starts = _literal_starts(alternative + after, width)
            if starts is None:
                return None
            found |= starts
        return found
    literal, _ = _literal_prefix(regex)
    return {literal[:width]} if literal else None


def _group_first_chars(regex: str) -> set[str] | None:
    close = _closing_paren(regex, 0)
    if close is None:
        return None
    inner, after = regex[3:close], regex[close + 1 :]
    if regex.startswith("(?="):  # what comes first is what one of its alternatives starts with
        after = ""
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
    r"""The members of a leading positive class like `[A-Za-z0-9_-]` or `[\\"',\n \t]`, or None."""
    end = regex.find("]", 2)
    if end < 0 or regex[1] == "^":
        return None
    members: list[tuple[str, bool]] = []  # (character, escaped: never a range's `-`)
    i = 1
    while i < end:
        char, escaped = regex[i], False
        if char == "\\":
            if i + 1 == end:  # `\]`: the class goes on past this `]`
                return None
            char, escaped = regex[i + 1], True
            if char.isalnum():
                if char not in _CLASS_ESCAPES:  # `\d`, `\w`, `\x41`: not simple to tell
                    return None
                char = _CLASS_ESCAPES[char]
            i += 1
        members.append((char, escaped))
        i += 1
    chars: set[str] = set()
    j = 0
    while j < len(members):
        if j + 2 < len(members) and members[j + 1] == ("-", False):
            chars.update(chr(c) for c in range(ord(members[j][0]), ord(members[j + 2][0]) + 1))
            j += 3
        else:
            chars.add(members[j][0])
            j += 1
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


def self_anchored(rule: Rule) -> bool:
    return not (rule.prefixes or rule.anchors or rule.lower_anchors or rule.context)


def scan(groups: tuple[_Group, ...], hay: Haystack) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    """Run every group's scan over `hay`; (rule → candidate start positions, rule → context line starts)."""
    candidates: dict[int, list[int]] = {}
    context: dict[int, list[int]] = {}
    for group in groups:
        buf = hay.lower if group.lowered else hay.data
        assert group.scan is not None
        width = len(group.key)
        suffixes = group.by_suffix
        by_byte = group.free_by_byte
        by_two = group.free_by_two
        end = len(buf)
        lead = group.lead
        for match in matches(group.scan, group.key[lead : lead + 1], buf):
            pos = match.start() - lead
            after = pos + width
            byte = buf[after] if after < end else 256
            split = by_two.get(byte)
            if split is None:
                anchors = by_byte[byte]
            else:
                anchors = split[0].get(buf[after + 1] if after + 1 < end else 256, split[1])
            if suffixes:
                two, one = suffixes.get(buf[pos - 2 : pos], ()), suffixes.get(buf[pos - 1 : pos], ())
                if two or one:
                    anchors = [*anchors, *(a for head, h in (*two, *one) if buf.endswith(head, 0, pos) for a in h)]
            for anchor in anchors:
                if anchor.rest is not None and anchor.rest.match(buf, after) is None:
                    continue
                if anchor.near and not _near(hay.lower, pos, anchor.near):
                    continue
                if anchor.context:
                    context.setdefault(anchor.rule, []).append(pos)
                else:
                    candidates.setdefault(anchor.rule, []).append(pos - len(anchor.head))
    return candidates, context


def _near(lower: bytes, pos: int, words: tuple[bytes, ...]) -> bool:
    """One of `words` occurs before `pos` on the same line, within _NEAR_BACK bytes."""
    start = max(0, pos - _NEAR_BACK, lower.rfind(b"\n", max(0, pos - _NEAR_BACK), pos) + 1)
    window = lower[start:pos]
    return any(w in window for w in words)

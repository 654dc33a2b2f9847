"""Finding a regex's matches by their first byte with bytes.find (search.py): the same matches as
sre's own search, whether the byte is rare, common, or rare and then common."""

from __future__ import annotations

import random
import re

import pytest

from sessionledger.core.redaction.search import matches

# (the byte every match starts with, the regex), as the scans and decoding triggers pass them
REGEXES = [
    (b"$", re.compile(rb"\$[^ ]*")),  # a match holding its own first byte again: `$a$b` is one match
    (b"&", re.compile(rb"&(?:amp|lt|#[0-9]{2});")),
    (b"$", re.compile(rb"\$(?<=[a-z]\$)[0-9]{2}")),  # a lookbehind reaching before the search's start
    (b"$", re.compile(rb"\$(?=[0-9])")),
]


# pieces holding a first byte (matches, near-matches, a byte inside a match), and filler
HITS = [b"$12", b"a$34", b"$a$b", b"$ ", b"&amp;", b"&#38;", b"&lt;&", b"& "]
FILLER = b"ab 12;"


def _text(rng: random.Random, size: int, share: float) -> bytes:
    out = bytearray()
    while len(out) < size:
        out += rng.choice(HITS) if rng.random() < share else bytes((rng.choice(FILLER),))
    return bytes(out)


@pytest.mark.parametrize(("first", "regex"), REGEXES, ids=[r.pattern.decode() for _, r in REGEXES])
@pytest.mark.parametrize(
    "parts",
    [
        [(20_000, 0.002)],  # rare all along: found with bytes.find
        [(20_000, 0.05)],  # common from the start: sre's search takes over at once
        [(30_000, 0.0002), (20_000, 0.2), (5_000, 0.0)],  # rare, then a burst, then none
    ],
    ids=["rare", "common", "rare-then-burst"],
)
def test_matches_are_sres_own(first: bytes, regex: re.Pattern[bytes], parts: list[tuple[int, float]]) -> None:
    rng = random.Random(7)
    data = b"".join(_text(rng, size, share) for size, share in parts)
    expected = [m.span() for m in regex.finditer(data)]
    assert expected, "the text must hold matches"
    assert [m.span() for m in matches(regex, first, data)] == expected


def test_no_match_and_empty_text() -> None:
    regex = re.compile(rb"\$[0-9]")
    assert list(matches(regex, b"$", b"")) == []
    assert list(matches(regex, b"$", b"costs $ a lot")) == []

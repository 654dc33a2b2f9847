"""Property-based tests: the parser and the redactor on arbitrary and mutated JSONL.

Neither may crash; the parser accounts for every line (parsed, ignored, duplicate or skipped);
the redactor keeps every line, and every line that was valid JSON stays valid JSON.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionledger.core.formats import cut_after_turn, parse_transcript, slim
from sessionledger.core.redaction import Redactor
from tests.client.transcript_builder import TranscriptBuilder

# derandomize: CI must not turn red on a new random draw; the fixed exploration still covers 150 cases each.
FUZZ = settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
REDACTOR = Redactor()

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
line_types = st.sampled_from(
    [
        "user",
        "assistant",
        "system",
        "summary",
        "progress",
        "attachment",
        "queue-operation",
        "file-history-snapshot",
        "custom-title",
        "weird",
    ]
)


@st.composite
def plausible_lines(draw: st.DrawFn) -> bytes:
    """JSON objects shaped roughly like transcript lines, with arbitrary field values."""
    line = {
        "type": draw(line_types),
        "uuid": draw(st.uuids().map(str) | st.none()),
        "parentUuid": draw(st.uuids().map(str) | st.none()),
        "timestamp": draw(st.text(max_size=30)),
        "message": draw(
            st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", 1]), "content": json_values})
        ),
    }
    line.update(
        draw(
            st.dictionaries(
                st.sampled_from(
                    ["isMeta", "isSidechain", "isCompactSummary", "subtype", "toolUseResult", "summary", "leafUuid"]
                ),
                json_values,
            )
        )
    )
    return json.dumps(line).encode()


def _real() -> bytes:
    return (
        TranscriptBuilder()
        .prompt("fix it")
        .thinking("hmm")
        .tool_call("Bash", {"command": "make"}, result="ok")
        .parallel_tools([("Read", {"file_path": "/a"}, "a"), ("Read", {"file_path": "/b"}, "b")])
        .assistant_text("done")
        .turn_end()
        .compact()
        .prompt("again")
        .assistant_text("ok")
        .build()
    )


def _mutate(data: bytes, cuts: list[int], junk: bytes) -> bytes:
    out = bytearray(data)
    for cut in cuts:
        position = cut % (len(out) + 1)
        out[position:position] = junk
    return bytes(out)


def _accounted(parsed, total_lines: int) -> None:
    stats = parsed.stats
    assert stats["lines"] == total_lines
    assert [m["index"] for m in parsed.messages] == list(range(len(parsed.messages)))


@FUZZ
@given(st.lists(plausible_lines() | st.binary(max_size=60).filter(lambda b: b"\n" not in b), max_size=25))
def test_the_parser_never_crashes_and_accounts_for_every_line(lines: list[bytes]) -> None:
    raw = b"".join(line + b"\n" for line in lines)
    parsed = parse_transcript(raw)
    _accounted(parsed, sum(1 for line in lines if _text(line).strip()))  # blank lines are not transcript lines
    broken = sum(1 for line in lines if _text(line).strip() and not _is_object(line))
    assert parsed.stats["skipped_lines"] >= broken


@FUZZ
@given(st.lists(st.integers(min_value=0), max_size=6), st.binary(min_size=1, max_size=12))
def test_a_mutated_real_transcript_still_parses_and_cuts(cuts: list[int], junk: bytes) -> None:
    raw = _mutate(_real(), cuts, junk)
    parsed = parse_transcript(raw)
    assert parsed.message_count >= 0
    for turn in range(1, parsed.turn_count + 2):
        assert _is_subsequence(cut_after_turn(raw, turn).splitlines(), raw.splitlines())
    slimmed, _ = slim(raw)
    assert slimmed.count(b"\n") == raw.count(b"\n")


@FUZZ
@given(st.lists(plausible_lines() | st.text(max_size=80).map(str.encode).filter(lambda b: b"\n" not in b), max_size=25))
def test_the_redactor_keeps_every_line_and_valid_json_stays_valid(lines: list[bytes]) -> None:
    raw = b"".join(line + b"\n" for line in lines)
    result = REDACTOR.redact_bytes(raw)
    out_lines = result.data.split(b"\n")
    assert len(out_lines) == len(lines) + 1
    for before, after in zip(lines, out_lines, strict=False):
        if _is_json(before):
            assert _is_json(after)
        if before != after:
            assert b"[REDACTED:" in after


@FUZZ
@given(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), min_size=20, max_size=60))
def test_a_secret_anywhere_in_a_json_string_keeps_the_line_valid(noise: str) -> None:
    secret = "ghp_" + "Zx9" * 12
    line = json.dumps({"type": "user", "message": {"content": f"{noise} {secret}\n{noise}"}}).encode()
    result = REDACTOR.redact_bytes(line + b"\n")
    assert _is_json(result.data.rstrip(b"\n")) and secret.encode() not in result.data


def _is_subsequence(part: list[bytes], whole: list[bytes]) -> bool:
    """Cutting only ever drops lines: what remains appears in the original, in order, unchanged."""
    remaining = iter(whole)
    return all(any(line == candidate for candidate in remaining) for line in part)


def _text(line: bytes) -> str:
    """A line as the parser sees it: decoded leniently, so Unicode whitespace counts as blank."""
    return line.decode("utf-8", "replace")


def _is_json(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def _is_object(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False

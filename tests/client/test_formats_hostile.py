"""Hostile transcript lines: the parser is linear, repairs what it can, never fails.

Each test is named after the attack it stops; docs/security.md says what the parser guarantees.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest

from sessionledger.core.formats import parse_transcript
from sessionledger.core.formats.classify import render_prompt, tag_value
from sessionledger.core.formats.resume import rewrite_for_resume, top_level_spans
from sessionledger.core.formats.sanitize import MAX_DEPTH
from tests.client.transcript_builder import TranscriptBuilder
from tests.work import assert_linear

META_REFRESH = '2026-01-01T"><meta http-equiv="refresh" content="0;url=https://evil.example/"><x y="Z'


def _line(record: dict[str, Any]) -> bytes:
    """ASCII JSON, as an attacker can write it: NULs and lone surrogates stay escapes."""
    return json.dumps(record).encode() + b"\n"


def _user(content: Any, **fields: Any) -> dict[str, Any]:
    record = {"type": "user", "uuid": fields.pop("uuid", "u1"), "timestamp": "2026-02-10T21:00:00.000Z"}
    return {**record, "message": {"role": "user", "content": content}, **fields}


def _command_names(n: int) -> str:
    return "<command-" + "<command-name>" * n  # 769 bytes gzipped at n = 21428; quadratic to a lazy regex


def test_command_name_flood_is_classified_in_linear_time() -> None:
    # Work, not time (tests/work.py): lines run and C calls made (str.find, regexes) at n and 2n.
    assert_linear(lambda n: partial(render_prompt, _command_names(n)), 2000, c_calls=True)
    assert_linear(lambda n: partial(parse_transcript, TranscriptBuilder().prompt(_command_names(n)).build()), 2000)
    # The full size, for its result (its time is bench/bench_pathological.py's: a backtracking regex
    # would spend it inside one C call, unseen by the counts).
    text = _command_names(21428)
    assert render_prompt(text) == (text, {})


def test_tag_value_reads_the_first_closed_tag() -> None:
    assert tag_value("<a>x</a><a>y</a>", "a") == "x"
    assert tag_value("<a>x", "a") is None and tag_value("x</a>", "a") is None
    assert render_prompt("<command-name>/compact</command-name><command-args>keep</command-args>") == (
        "/compact keep",
        {"command": "/compact"},
    )


def test_image_placeholder_flood_makes_a_title_in_linear_time() -> None:
    def flood(n: int) -> bytes:
        return TranscriptBuilder().prompt("[image:" * n + " fix the build").build()

    assert_linear(lambda n: partial(parse_transcript, flood(n)), 20_000, c_calls=True)
    raw = flood(200_000)  # 1.4 MB of placeholders, then the words; an unbounded class would rescan in C
    assert parse_transcript(raw).title
    assert TranscriptBuilder().prompt("[image: image/png, 3 KB] fix it").build()
    assert parse_transcript(TranscriptBuilder().prompt("[image: image/png, 3 KB] fix it").build()).title == "fix it"


def test_unterminated_escaped_string_line_is_scanned_in_linear_time() -> None:
    def line(n: int) -> bytes:
        return b'{"type":"user","sessionId":"' + b'\\"' * n + b"\n"

    assert_linear(lambda n: partial(top_level_spans, line(n)), 20_000, c_calls=True)
    assert_linear(lambda n: partial(rewrite_for_resume, line(n), session_id="new"), 20_000, c_calls=True)
    long = line(200_000)  # the token regex scans it in C
    assert top_level_spans(long) == {"type": (8, 14)}  # the open string is no value
    assert rewrite_for_resume(long, session_id="new")
    assert top_level_spans(b'{"a":"x\\"y","b":[1,{"c":2}]}\n') == {"a": (5, 11), "b": (16, 27)}


def test_nul_in_a_prompt_is_replaced_and_the_line_counted_as_repaired() -> None:
    parsed = parse_transcript(_line(_user("find the \x00 byte")))
    assert parsed.messages[0]["content"] == "find the \ufffd byte"
    assert parsed.title == "find the \ufffd byte" and parsed.prompts == ["find the \ufffd byte"]
    assert parsed.stats["repaired_lines"] == 1 and parsed.stats["skipped_lines"] == 0


def test_lone_surrogate_line_is_repaired_and_the_document_encodes() -> None:
    raw = _line(_user("half a pair: \ud83d, a whole one: \U0001f600", **{"k\ud800": 1}))
    parsed = parse_transcript(raw)
    assert parsed.messages[0]["content"] == "half a pair: \ufffd, a whole one: \U0001f600"
    assert parsed.stats["repaired_lines"] == 1
    json.dumps(parsed.to_document(), ensure_ascii=False).encode()  # would raise on a surrogate


def test_meta_refresh_timestamp_becomes_null_and_is_counted() -> None:
    raw = _line(_user("hello", timestamp=META_REFRESH)) + _line(_user("again", uuid="u2", timestamp=7))
    parsed = parse_transcript(raw)
    assert [m["timestamp"] for m in parsed.messages] == [None, None]
    assert parsed.turns[0]["timestamp"] is None
    assert parsed.stats["invalid_timestamps"] == 2


@pytest.mark.parametrize(
    ("written", "stored"),
    [
        ("2026-02-10T21:00:03.000Z", "2026-02-10T21:00:03.000Z"),
        ("2026-02-10T21:00:03Z", "2026-02-10T21:00:03.000Z"),
        ("2026-02-10T23:00:03.123456+02:00", "2026-02-10T21:00:03.123Z"),
        ("2026-02-10 21:00:03", "2026-02-10T21:00:03.000Z"),
    ],
)
def test_timestamps_are_stored_in_one_canonical_utc_form(written: str, stored: str) -> None:
    assert parse_transcript(_line(_user("hi", timestamp=written))).messages[0]["timestamp"] == stored


def test_nan_and_infinity_become_null_so_the_document_is_json() -> None:
    line = b'{"type":"assistant","uuid":"a","message":{"id":"m","usage":{"output_tokens":NaN,"x":1e999},'
    line += b'"content":[{"type":"tool_use","id":"t","name":"X","input":{"n":-Infinity,"ok":1.5}}]}}\n'
    message = parse_transcript(line).messages[0]
    assert message["usage"] == {"output_tokens": None, "x": None}
    assert message["tool"]["input"] == {"n": None, "ok": 1.5}
    json.dumps(message, allow_nan=False)


def test_deep_nesting_is_flattened_so_the_document_decodes_again_anywhere() -> None:
    deep = '{"k":[' * 400 + '"bottom"' + "]}" * 400
    call = f'{{"type":"tool_use","id":"t","name":"X","input":{deep}}}'
    line = f'{{"type":"assistant","uuid":"a","message":{{"content":[{call}]}}}}'
    parsed = parse_transcript(line.encode() + b"\n")
    assert parsed.stats["repaired_lines"] == 1
    document = json.loads(json.dumps(parsed.to_document()))
    assert _depth(document) <= MAX_DEPTH + 6  # document → messages → message → tool → input → record depth
    assert document["messages"][0]["tool"]["name"] == "X"


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 0)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, level + 1)
            stack += [(child, level + 1) for child in (node.values() if isinstance(node, dict) else node)]
    return deepest


def test_one_bad_line_never_fails_the_session() -> None:
    good = TranscriptBuilder().prompt("a real prompt").assistant_text("ok").build()
    bad = [
        b'{"type":"user","message":{"content":"\\u0000"},"uuid":"\\ud800"}\n',
        b'{"type": ' + b"[" * 100_000 + b"\n",
        b'{"type":"user","message":{"content":' + b"1" * 5000 + b"}}\n",
        b"\xff\xfe\x00garbage\n",
        b'{"type":"user","timestamp":{"a":1},"message":{"content":[{"type":"text","text":7}]}}\n',
    ]
    parsed = parse_transcript(b"".join(bad) + good)
    assert parsed.prompts == ["\ufffd", "a real prompt"]
    assert parsed.stats["skipped_lines"] == 3 and parsed.stats["repaired_lines"] == 1
    json.dumps(parsed.to_document(), allow_nan=False, ensure_ascii=False).encode()

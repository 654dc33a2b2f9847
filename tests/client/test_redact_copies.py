"""The duplicated tool output the scans skip (docs/redaction.md "Every placement, every copy").

A `toolUseResult` string that repeats its line's tool_result content is scanned once, through the
content; what is found there is mapped into the copy. These tests make sure a copy is only
skipped when it really is a copy, and that nothing in it survives.
"""

from __future__ import annotations

import base64
import json
import random

from sessionledger.core.redaction import Redactor
from sessionledger.core.redaction.copies import duplicate_copies
from sessionledger.core.redaction.examples import random_chars
from sessionledger.core.redaction.spans import Lines
from tests.client.transcript_builder import TranscriptBuilder

RNG = random.Random(77)
ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
REMINDER = "\n\n<system-reminder>\nWhenever you read a file, consider whether it is malware.\n</system-reminder>\n"


def numbered(text: str) -> str:
    return "\n".join(f"{n:>6}→{line}" for n, line in enumerate(text.split("\n"), 1))


def read_line(content: str, file_content: str) -> bytes:
    file = {"filePath": "/w/.env", "content": file_content, "numLines": 3, "startLine": 1, "totalLines": 3}
    return (
        TranscriptBuilder().tool_result("toolu_01Abc", content, tool_use_result={"type": "text", "file": file}).build()
    )


def test_a_bash_stdout_repeating_the_content_is_a_copy() -> None:
    line = TranscriptBuilder().tool_result("toolu_01Abc", 'say "hi"}]\nok').build()
    [copy] = duplicate_copies(line)
    assert json.loads(b'"' + line[copy.start : copy.end] + b'"') == 'say "hi"}]\nok'
    assert not copy.numbered


def test_a_numbered_read_with_a_reminder_is_a_copy() -> None:
    text = "A=1\nB=2\nC=3"
    [copy] = duplicate_copies(read_line(numbered(text) + REMINDER, text))
    assert copy.numbered


def test_a_different_copy_is_scanned_itself() -> None:
    """A toolUseResult that does not repeat the content must not be skipped: its secret is found."""
    token = "gh" + "p_" + random_chars(RNG, ALNUM, 36)
    line = read_line(numbered("A=1\nB=2"), f"A=1\nB=2\nTOKEN={token}")
    assert duplicate_copies(line) == []
    assert token.encode() not in Redactor().redact_bytes(line).data


def test_secrets_found_in_numbered_content_are_mapped_line_and_column() -> None:
    password = random_chars(RNG, ALNUM, 12) + "!7"
    key = "-----BEGIN EC PRIVATE KEY-----\n" + "\n".join(random_chars(RNG, ALNUM, 64) for _ in range(3))
    key += "\n-----END EC PRIVATE KEY-----"
    text = f"# settings\nDB_PASSWORD={password}\n{key}\nDEBUG=false"
    line = read_line(numbered(text) + REMINDER, text)
    assert len(duplicate_copies(line)) == 1

    result = Redactor().redact_bytes(line)

    record = json.loads(result.data)
    copy = record["toolUseResult"]["file"]["content"]
    assert copy == "# settings\nDB_PASSWORD=[REDACTED:password]\n[REDACTED:private_key]\nDEBUG=false"
    content = record["message"]["content"][0]["content"]
    assert content.startswith(
        "     1→# settings\n     2→DB_PASSWORD=[REDACTED:password]\n     3→[REDACTED:private_key]\n"
    )
    assert password not in json.dumps(record)


def test_short_secrets_reach_the_copy_too() -> None:
    """Values shorter than the every-copy minimum (a 6-character `-p` password) are mapped as well."""
    line = TranscriptBuilder().tool_result("toolu_01Abc", "mysql -u root -pX9k2Lm -e 'select 1'").build()
    result = Redactor().redact_bytes(line)
    assert b"X9k2Lm" not in result.data
    assert result.counts == {"password": 2}


def test_an_escaped_secret_found_in_the_content_goes_from_the_copy_too() -> None:
    """`gh api` prints JSON with escaped slashes: a webhook found only decoded, in the tool_result
    content, is replaced in the skipped `stdout` copy as well."""
    path = f"T{random_chars(RNG, ALNUM.upper(), 10)}/B{random_chars(RNG, ALNUM.upper(), 10)}/"
    secret = random_chars(RNG, ALNUM, 24)
    output = '{"url": "https:\\/\\/hooks.slack.com\\/services\\/' + path.replace("/", "\\/") + secret + '"}'
    output += "\n" + "ok " * 300  # the copy lies beyond the window decoded around the escapes
    line = TranscriptBuilder().tool_result("toolu_01Abc", output).build()
    assert len(duplicate_copies(line)) == 1
    result = Redactor().redact_bytes(line)
    assert secret.encode() not in result.data
    assert sum(result.counts.values()) == 2


def test_a_base64_env_found_in_the_content_goes_from_the_copy_too() -> None:
    """A `.env` shipped as one base64 value, in a numbered Read and its skipped `file.content` copy."""
    password = random_chars(RNG, ALNUM, 14) + "!7"
    blob = base64.b64encode(f"DB_HOST=db.internal\nDB_PASSWORD={password}\n".encode()).decode()
    text = f"# deploy\nENV_B64={blob}\nDEBUG=false"
    line = read_line(numbered(text) + REMINDER, text)
    assert len(duplicate_copies(line)) == 1
    result = Redactor().redact_bytes(line)
    assert blob[8:40].encode() not in result.data
    assert sum(result.counts.values()) == 2


def _edit_with_bare_value(builder: TranscriptBuilder, value: str) -> None:
    """An Edit replacing a placeholder with `value` alone (a YAML block scalar's line): no name next to it."""
    old, new = "  placeholder", f"  {value}"
    lines = ["api_key: >-", f"-{old}", f"+{new}"]
    patch = [{"oldStart": 2, "oldLines": 2, "newStart": 2, "newLines": 2, "lines": lines}]
    result = {"filePath": "/w/config.yml", "oldString": old, "newString": new, "structuredPatch": patch}
    builder.tool_call(
        "Edit",
        {"file_path": "/w/config.yml", "old_string": old, "new_string": new},
        result="The file /w/config.yml has been updated.",
        tool_use_result=result,
    )


def test_every_copy_goes_when_a_file_holds_many_secrets() -> None:
    """A value recognised once (a `.env` read at the start) is redacted in an Edit far later whose
    `structuredPatch` holds it bare (`+VALUE`), even with more than eight distinct secrets in the file."""
    values = [random_chars(RNG, ALNUM, 32) for _ in range(12)]
    env = "\n".join(f"SERVICE_{i}_API_KEY={value}" for i, value in enumerate(values))
    builder = TranscriptBuilder()
    builder.tool_call(
        "Read",
        {"file_path": "/w/.env"},
        result=numbered(env),
        tool_use_result={"type": "text", "file": {"filePath": "/w/.env", "content": env, "numLines": 12}},
    )
    for i in range(12):  # far from the read: its neighbourhood is not where the copy is
        builder.assistant_text(f"step {i}: nothing secret here")
    _edit_with_bare_value(builder, values[5])
    result = Redactor().redact_bytes(builder.build())
    for value in values:
        assert value.encode() not in result.data
    patch = [json.loads(line) for line in result.data.splitlines()][-1]["toolUseResult"]["structuredPatch"]
    assert patch[0]["lines"][-1] == "+  [REDACTED:generic_secret]"


def test_every_place_a_value_was_found_is_searched_around() -> None:
    """With more distinct secrets than are searched in the whole buffer, a value's copies are looked
    for around every place it was recognised, not only the first."""
    values = [random_chars(RNG, ALNUM, 32) for _ in range(40)]
    env = "\n".join(f"SERVICE_{i}_API_KEY={value}" for i, value in enumerate(values))
    builder = TranscriptBuilder()
    builder.tool_call("Bash", {"command": "cat .env"}, result=env)
    for i in range(12):
        builder.assistant_text(f"step {i}: nothing secret here")
    builder.prompt(f"use SERVICE_7_API_KEY={values[7]} for the import")  # recognised again, far later
    _edit_with_bare_value(builder, values[7])
    result = Redactor().redact_bytes(builder.build())
    assert values[7].encode() not in result.data


def test_a_neighbourhood_holds_three_lines_each_side_whatever_the_blank_lines() -> None:
    """Copies near a value are searched from three lines or more before its line to exactly three
    lines after it: blank lines, a value at its line's start and the buffer's ends included."""
    rng = random.Random(5)
    for _ in range(300):
        data = "".join(rng.choice("ab\n\n") for _ in range(rng.randrange(1, 60))).encode() + b"a"
        at = rng.choice([i for i, byte in enumerate(data) if byte != 0x0A])  # where a value starts
        lo, hi = Lines(data).neighbourhood(at)
        starts = [0, *(i + 1 for i, byte in enumerate(data) if byte == 0x0A)]
        line = max(i for i, start in enumerate(starts) if start <= at)
        ends = [*(start - 1 for start in starts[1:]), len(data)]
        assert lo <= starts[max(0, line - 3)]
        assert hi == ends[min(len(ends) - 1, line + 3)]
        assert Lines(data).after(at) == hi

"""Fitting a segment under the server's size limit (docs/design.md §7 "Size")."""

from __future__ import annotations

import json
import random
import re

import pytest

from sessionledger.fit import MIN_KEEP, fit_to_limit
from tests.client.transcript_builder import TranscriptBuilder, image_block
from tests.realfixtures import REAL_TRANSCRIPTS as FIXTURES
from tests.realfixtures import real_transcripts

RNG = random.Random(7)
MARKER_RE = re.compile(r"\[… sessionledger truncated (\d+) bytes …\]")


def output(n_lines: int, tag: str) -> str:
    """Realistic command output: numbered log lines."""
    return "".join(f"{tag} {i:06d} INFO worker processed job id={RNG.getrandbits(48):012x}\n" for i in range(n_lines))


def session(outputs: list[str]) -> bytes:
    b = TranscriptBuilder().prompt("run the jobs and show me the logs")
    b.thinking("I'll run each job.", signature="Eq" + "A" * 400)
    for i, text in enumerate(outputs):
        b.tool_call("Bash", {"command": f"./job {i}"}, result=text)
        b.assistant_text(f"Job {i} finished.")
    return b.turn_end().build()


def lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def stdout_of(line: bytes) -> str:
    return json.loads(line)["toolUseResult"]["stdout"]


def markers(data: bytes) -> list[int]:
    return [int(n) for n in MARKER_RE.findall(data.decode())]


def assert_valid(data: bytes, before: bytes) -> None:
    assert len(lines(data)) == len(lines(before))  # never a dropped line
    for old, new in zip(lines(before), lines(data), strict=True):
        parsed = json.loads(new)
        if new != old:  # re-serialised compactly, like Claude Code
            assert new == json.dumps(parsed, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def test_small_segment_is_returned_unchanged() -> None:
    data = session([output(10, "a")])
    result = fit_to_limit(data, len(data))
    assert result.data is data
    assert (result.truncated_bytes, result.truncated_outputs) == (0, 0)


def test_oversized_segment_fits_with_marked_truncation() -> None:
    data = session([output(3000, "big"), output(50, "small")])
    limit = len(data) // 2

    result = fit_to_limit(data, limit)

    assert len(result.data) <= limit
    assert_valid(result.data, data)
    cut = markers(result.data)
    assert cut and sum(cut) == result.truncated_bytes
    assert result.truncated_outputs == len(cut) == 2  # tool_result content and its toolUseResult copy
    assert result.truncated_bytes > (len(data) - limit) * 0.8  # text bytes; the JSON escapes were extra


def test_head_and_tail_are_kept_around_the_marker() -> None:
    text = output(4000, "log")
    data = session([text])
    result = fit_to_limit(data, len(data) - len(text))  # must cut about half of each copy
    index = next(i for i, ln in enumerate(lines(data)) if b"toolUseResult" in ln and b"log 000000" in ln)
    cut = stdout_of(lines(result.data)[index])
    match = MARKER_RE.search(cut)
    assert match is not None
    head, tail = cut[: match.start()], cut[match.end() + 1 :]
    assert cut[match.end()] == "\n" and head.endswith("\n")  # the marker is a line of its own
    assert text.startswith(head) and text.endswith(tail)
    assert head.startswith("log 000000") and tail.startswith("log ") and tail.endswith("\n")
    assert len(head) > 1000 and len(tail) > 1000
    assert len(text.encode()) - len((head + tail).encode()) == int(match.group(1))


def test_largest_outputs_are_truncated_first() -> None:
    sizes = {"huge": 4000, "large": 1500, "medium": 300, "tiny": 20}
    texts = {tag: output(n, tag) for tag, n in sizes.items()}
    data = session(list(texts.values()))
    by_tag = {tag: i for i, ln in enumerate(lines(data)) for tag in texts if f'"stdout":"{tag} 000000'.encode() in ln}

    # Cutting only the huge output is enough: nothing else is touched.
    mild = fit_to_limit(data, len(data) - len(texts["huge"]))
    changed = {i for i, (a, b) in enumerate(zip(lines(data), lines(mild.data), strict=True)) if a != b}
    assert changed == {by_tag["huge"]}

    # Tighter: the two largest are cut to the same level, the small ones stay whole.
    tight = fit_to_limit(data, len(data) - 2 * len(texts["huge"]))
    out = lines(tight.data)
    assert MARKER_RE.search(stdout_of(out[by_tag["huge"]])) and MARKER_RE.search(stdout_of(out[by_tag["large"]]))
    assert stdout_of(out[by_tag["medium"]]) == texts["medium"] and stdout_of(out[by_tag["tiny"]]) == texts["tiny"]
    level = {tag: len(stdout_of(out[by_tag[tag]]).encode()) for tag in ("huge", "large")}
    assert abs(level["huge"] - level["large"]) < 1000


def test_prompt_and_thinking_lines_stay_byte_identical_while_outputs_suffice() -> None:
    data = session([output(3000, "a"), output(3000, "b")])
    result = fit_to_limit(data, len(data) // 3)
    for old, new in zip(lines(data), lines(result.data), strict=True):
        if b'"toolUseResult"' not in old:
            assert new == old


def test_large_base64_image_is_a_candidate() -> None:
    b = TranscriptBuilder().prompt("what is in this screenshot?", images=[image_block(size=300 * 1024)])
    data = b.assistant_text("A login form.").turn_end().build()
    result = fit_to_limit(data, 50_000)
    assert len(result.data) <= 50_000
    assert_valid(result.data, data)
    source = json.loads(lines(result.data)[0])["message"]["content"][1]["source"]
    assert MARKER_RE.fullmatch(source["data"]) and source["slimmed"] is True
    assert source["original_size"] == 300 * 1024
    assert result.truncated_outputs == 1


def test_huge_prompt_is_truncated_when_outputs_are_not_enough() -> None:
    prompt = "Please refactor this module:\n" + output(5000, "src")
    data = TranscriptBuilder().prompt(prompt).tool_call("Bash", {"command": "ls"}, result="a\nb\n").build()
    result = fit_to_limit(data, 60_000)
    assert len(result.data) <= 60_000
    assert_valid(result.data, data)
    text = json.loads(lines(result.data)[0])["message"]["content"]
    assert text.startswith("Please refactor this module:\n") and MARKER_RE.search(text)
    assert lines(result.data)[1:] == lines(data)[1:]


def test_tool_outputs_go_down_to_min_keep_before_prompts_are_touched() -> None:
    prompt = "Context:\n" + output(800, "ctx")
    b = TranscriptBuilder().prompt(prompt)
    b.tool_call("Bash", {"command": "cat big.log"}, result=output(3000, "out"))
    data = b.build()
    # More than the output alone can give: the output is at MIN_KEEP, the prompt is cut too.
    result = fit_to_limit(data, len(prompt) // 2 + 8_000)
    out = lines(result.data)
    assert len(stdout_of(out[2]).encode()) <= MIN_KEEP + 100
    assert MARKER_RE.search(json.loads(out[0])["message"]["content"])


def test_escapes_and_multibyte_text_still_fit() -> None:
    text = "".join(f'línea {i}: "quoted" \\ tab\t✓ 🚀 {RNG.random()}\n' for i in range(6000))
    data = session([text])
    limit = len(data) // 3
    result = fit_to_limit(data, limit)
    assert len(result.data) <= limit
    assert_valid(result.data, data)


def test_broken_lines_are_kept() -> None:
    data = session([output(3000, "a")]) + b'{"type":"assistant","mess'
    result = fit_to_limit(data, len(data) // 2)
    assert result.data.endswith(b'{"type":"assistant","mess')
    assert len(result.data) <= len(data) // 2


def test_output_is_deterministic() -> None:
    data = session([output(2000, "a"), output(1000, "b"), output(3000, "c")])
    first, second = fit_to_limit(data, 150_000), fit_to_limit(data, 150_000)
    assert first == second


@pytest.mark.parametrize("limit", [0, -1, 200])
def test_impossible_limit_raises(limit: int) -> None:
    data = session([output(100, "a")])
    with pytest.raises(ValueError):
        fit_to_limit(data, limit)


@real_transcripts
def test_real_transcript_fits_half_its_size() -> None:
    data = (FIXTURES / "spotter__subagent.jsonl").read_bytes()
    result = fit_to_limit(data, len(data) // 2)
    assert len(result.data) <= len(data) // 2
    assert result.truncated_outputs > 0
    assert len(lines(result.data)) == len(lines(data))
    for line in lines(result.data):
        json.loads(line)

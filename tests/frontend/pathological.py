"""Hostile transcripts that once stalled the worker or a page (docs/security.md), shared by the
tests and bench/bench_pathological.py: the tests count the work at two sizes (tests/work.py), the
bench prints the real timings.

Each case is small to upload (≤ ~3 MB raw) and aims at one step that used to be superlinear or
unbounded: a regex that backtracks, a lexer or Markdown rule with a huge constant, a diff that
compares every line with every other, a search needle matched character by character. `build(n)`
makes the attack of size n (the bench's size by default); `sizes` are the tests' n and repeat count.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from tests.client.transcript_builder import TranscriptBuilder

Built = tuple[bytes, dict[str, bytes]]


@dataclass(frozen=True)
class Case:
    name: str  # the attack; test ids read as it
    build: Callable[..., Built]  # build() at the bench's size, build(n, count) smaller
    query: str = ""  # the session page's query string (a search, a filter)
    sizes: tuple[int, int] | None = None  # the tests' (n, count): n and 2n are compared; None: not a size attack
    in_c: bool = False  # the risk is a regex backtracking inside one C call: the counts cannot see it


def _one_prompt(text: str) -> Built:
    return TranscriptBuilder().prompt(text).assistant_text("ok").turn_end().build(), {}


def command_name_flood(n: int = 21428, count: int = 1) -> Built:
    """A 300 KB slash-command envelope without closing tags (quadratic to a lazy regex)."""
    return _one_prompt("<command-" + "<command-name>" * n)


def image_placeholder_flood(n: int = 200_000, count: int = 1) -> Built:
    """A title made from 1.4 MB of unterminated ``[image:`` (an unbounded class rescans the rest)."""
    return _one_prompt("[image:" * n)


def task_results_of_spaces(n: int = 20_000, count: int = 50) -> Built:
    """50 sub-agent answers of 20k spaces and no trailer (the trailer regex backtracked over each run)."""
    b = TranscriptBuilder()
    b.prompt("Delegate it")
    for k in range(count):
        b.new_response().task(f"Job {k}", "Look around", agent_id=f"a{k:06x}", result=" " * n, links=("result",))
    return b.assistant_text("done").turn_end().build(), {}


def markdown_brackets(n: int = 29_000, count: int = 100) -> Built:
    """100 replies of 29k ``[`` each: markdown-it is linear but slow per character on them."""
    b = TranscriptBuilder().prompt("Say it with brackets")
    for _ in range(count):
        b.new_response().assistant_text("[" * n)
    return b.turn_end().build(), {}


def markdown_emphasis(n: int = 9_000, count: int = 60) -> Built:
    """Runs of ``**_`` and ``![`` that make markdown-it's delimiter and link rules busy."""
    b = TranscriptBuilder().prompt("Emphasise")
    for k in range(count):
        b.new_response().assistant_text(("**_" if k % 2 else "![") * n)
    return b.turn_end().build(), {}


def highlight_flood(n: int = 40_000, count: int = 60) -> Built:
    """60 Writes of 40k characters of Python each: 2.4 MB through Pygments on one page."""
    code = "def f(x):\n    return [x * 2 for x in range(10)]  # comment\n" * (n // 57 + 1)
    b = TranscriptBuilder().prompt("Write files")
    for k in range(count):
        b.new_response().tool_call("Write", {"file_path": f"/w/m{k}.py", "content": code[:n]}, result="ok")
    return b.turn_end().build(), {}


def interleaved_edit(n: int = 1_000, count: int = 60) -> Built:
    """Edits that interleave a new line after every old one: difflib compares ~all line pairs."""
    old = "\n".join(f"a{k}" for k in range(n))
    new = "\n".join(f"{line}\nb{k}" for k, line in enumerate(old.split("\n")))
    b = TranscriptBuilder().prompt("Interleave it")
    for k in range(count):
        b.new_response().tool_call("Edit", {"file_path": f"/w/{k}.txt", "old_string": old, "new_string": new})
    return b.turn_end().build(), {}


DEEP_PAIRS = 460  # {"k": [ … ]} pairs: json.loads takes them in the worker (main: 3 messages), not in a page (500)


def deep_tool_input() -> Built:
    """A tool input nested ~860 containers deep: fine in the worker, too deep to decode in a page."""
    b = TranscriptBuilder().prompt("Nest")
    raw = b.tool_call("mcp__deep__tool", {"payload": "DEEP"}, result="ok").turn_end().build()
    deep = b'{"k":[' * DEEP_PAIRS + b'"bottom"' + b"]}" * DEEP_PAIRS
    return raw.replace(b'"DEEP"', deep, 1), {}


def nul_and_lone_surrogate() -> Built:
    """A NUL in a prompt (PostgreSQL refuses it) and a line with a lone surrogate (not UTF-8)."""
    b = TranscriptBuilder().prompt("find the \x00 byte").assistant_text("ok")
    line = {"type": "user", "uuid": "lone-1", "parentUuid": b.last_uuid, "timestamp": "2026-02-10T21:00:09.000Z"}
    line["message"] = {"role": "user", "content": "half a pair: \ud83d and a NUL \x00"}
    b.raw(json.dumps(line))  # ASCII JSON keeps the surrogate as the escape an attacker writes
    return b.assistant_text("done").turn_end().build(), {}


def search_needle_worst_case(n: int = 20_000, count: int = 50) -> Built:
    """Results of 20k ``a`` searched for ``a…ab``: a regex needle compares ~200 characters a position."""
    b = TranscriptBuilder().prompt("Print a lot of a")
    for k in range(count):
        b.new_response().tool_call("Bash", {"command": f"yes a | head -{k}"}, result="a" * n)
    return b.turn_end().build(), {}


def one_huge_line(n: int = 2_000_000, count: int = 1) -> Built:
    """One 2 MB tool result on one line (4 MB with its toolUseResult copy)."""
    b = TranscriptBuilder().prompt("Dump it")
    return b.tool_call("Bash", {"command": "cat big"}, result="x" * n).turn_end().build(), {}


def many_turns(n: int = 3_000, count: int = 1) -> Built:
    """3,000 one-line turns: the turn navigation and pagination walk them all on every page."""
    b = TranscriptBuilder(step_seconds=0.001)
    for k in range(n):
        b.prompt(f"turn {k}").assistant_text("ok")
    return b.build(), {}


CASES = [
    Case("command_name_flood", command_name_flood, sizes=(500, 1), in_c=True),
    Case("image_placeholder_flood", image_placeholder_flood, sizes=(20_000, 1), in_c=True),
    Case("task_results_of_spaces", task_results_of_spaces, sizes=(2_000, 2), in_c=True),
    Case("markdown_brackets", markdown_brackets, sizes=(300, 2)),
    Case("markdown_emphasis", markdown_emphasis, sizes=(100, 2)),
    Case("highlight_flood", highlight_flood, sizes=(2_000, 2)),
    Case("interleaved_edit", interleaved_edit, sizes=(200, 2)),
    Case("deep_tool_input", deep_tool_input),
    Case("nul_and_lone_surrogate", nul_and_lone_surrogate),
    Case(
        "search_needle_worst_case",
        search_needle_worst_case,
        query="q=" + "a" * 199 + "b",
        sizes=(2_000, 2),
        in_c=True,
    ),
    Case("one_huge_line", one_huge_line, sizes=(20_000, 1)),
    Case("many_turns", many_turns, sizes=(200, 1)),
]

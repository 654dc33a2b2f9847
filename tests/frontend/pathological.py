"""Hostile transcripts that once stalled the worker or a page (issue 14), shared by the tests and
bench/bench_pathological.py: the tests assert generous bounds, the bench prints the real figures.

Each case is small to upload (≤ ~3 MB raw) and aims at one step that used to be superlinear or
unbounded: a regex that backtracks, a lexer or Markdown rule with a huge constant, a diff that
compares every line with every other, a search needle matched character by character.
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
    build: Callable[[], Built]
    query: str = ""  # the session page's query string (a search, a filter)
    worker_seconds: float = 20.0  # the tests' bound for parse + derive (generous: shared CI machines)
    page_seconds: float = 20.0  # … and for one session page


def _one_prompt(text: str) -> Built:
    return TranscriptBuilder().prompt(text).assistant_text("ok").turn_end().build(), {}


def command_name_flood() -> Built:
    """A 300 KB slash-command envelope without closing tags (a lazy regex made this 28 s)."""
    return _one_prompt("<command-" + "<command-name>" * 21428)


def image_placeholder_flood() -> Built:
    """A title made from 1.4 MB of unterminated ``[image:`` (an unbounded class rescans the rest)."""
    return _one_prompt("[image:" * 200_000)


def task_results_of_spaces() -> Built:
    """50 sub-agent answers of 20k spaces and no trailer (the trailer regex backtracked over each run)."""
    b = TranscriptBuilder()
    b.prompt("Delegate it")
    for n in range(50):
        b.new_response().task(f"Job {n}", "Look around", agent_id=f"a{n:06x}", result=" " * 20_000, links=("result",))
    return b.assistant_text("done").turn_end().build(), {}


def markdown_brackets() -> Built:
    """100 replies of 29k ``[`` each: markdown-it is linear but ~40 µs a character on them."""
    b = TranscriptBuilder().prompt("Say it with brackets")
    for _ in range(100):
        b.new_response().assistant_text("[" * 29_000)
    return b.turn_end().build(), {}


def markdown_emphasis() -> Built:
    """Runs of ``**_`` and ``![`` that make markdown-it's delimiter and link rules busy."""
    b = TranscriptBuilder().prompt("Emphasise")
    for n in range(60):
        b.new_response().assistant_text(("**_" if n % 2 else "![") * 9_000)
    return b.turn_end().build(), {}


def highlight_flood() -> Built:
    """60 Writes of 40k characters of Python each: 2.4 MB through Pygments on one page."""
    code = "def f(x):\n    return [x * 2 for x in range(10)]  # comment\n" * 700
    b = TranscriptBuilder().prompt("Write files")
    for n in range(60):
        b.new_response().tool_call("Write", {"file_path": f"/w/m{n}.py", "content": code[:40_000]}, result="ok")
    return b.turn_end().build(), {}


def interleaved_edit() -> Built:
    """Edits that interleave a new line after every old one: difflib compares ~all line pairs."""
    old = "\n".join(f"a{n}" for n in range(1_000))
    new = "\n".join(f"{line}\nb{n}" for n, line in enumerate(old.split("\n")))
    b = TranscriptBuilder().prompt("Interleave it")
    for n in range(60):
        b.new_response().tool_call("Edit", {"file_path": f"/w/{n}.txt", "old_string": old, "new_string": new})
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


def search_needle_worst_case() -> Built:
    """Results of 20k ``a`` searched for ``a…ab``: a regex needle compares ~200 characters a position."""
    b = TranscriptBuilder().prompt("Print a lot of a")
    for n in range(50):
        b.new_response().tool_call("Bash", {"command": f"yes a | head -{n}"}, result="a" * 20_000)
    return b.turn_end().build(), {}


def one_huge_line() -> Built:
    """One 2 MB tool result on one line (4 MB with its toolUseResult copy)."""
    b = TranscriptBuilder().prompt("Dump it")
    return b.tool_call("Bash", {"command": "cat big"}, result="x" * 2_000_000).turn_end().build(), {}


def many_turns() -> Built:
    """3,000 one-line turns: the turn navigation and pagination walk them all on every page."""
    b = TranscriptBuilder(step_seconds=0.001)
    for n in range(3_000):
        b.prompt(f"turn {n}").assistant_text("ok")
    return b.build(), {}


CASES = [
    Case("command_name_flood", command_name_flood),
    Case("image_placeholder_flood", image_placeholder_flood),
    Case("task_results_of_spaces", task_results_of_spaces),
    Case("markdown_brackets", markdown_brackets),
    Case("markdown_emphasis", markdown_emphasis),
    Case("highlight_flood", highlight_flood),
    Case("interleaved_edit", interleaved_edit),
    Case("deep_tool_input", deep_tool_input),
    Case("nul_and_lone_surrogate", nul_and_lone_surrogate),
    Case("search_needle_worst_case", search_needle_worst_case, query="q=" + "a" * 199 + "b"),
    Case("one_huge_line", one_huge_line),
    Case("many_turns", many_turns),
]

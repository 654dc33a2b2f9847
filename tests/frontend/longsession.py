"""A long autonomous session shaped like the real ones a lead reads (built, not copied).

Modelled on the 3.5 MB Claude Code 2.1.39 sessions of the shared fixtures: two human prompts and
then ~500 messages of agent work over 42 minutes — Read outputs with Claude's `     5→` prefixes
(some past the 20k inline limit), bursts of edits, failing test runs, commits made with
`git commit`, a sub-agent spawned by a Task call (boilerplate prompt, injected
`<system-reminder>` rows, a `<usage>` trailer on its report), a compaction whose side agent
(`acompact-…`) the document appends at the end though it ran in the middle.
"""

from __future__ import annotations

from tests.client.transcript_builder import TranscriptBuilder

REPORT = (
    "The retry policy lives in `app/retry.py`; backoff is computed in `app/backoff.py` "
    "and tested in `tests/test_retry.py`."
)
BOILERPLATE = (
    "You are an agent for Claude Code. Given the user's message, use the tools available to complete the task. "
    "Do what has been asked; nothing more, nothing less. When you complete the task simply respond with a "
    "detailed writeup.\n\n"
) * 12


def _source(name: str, lines: int, first: int = 1) -> str:
    body = [
        f'"""{name}: retry and backoff."""',
        "",
        "import random",
        "",
        "",
        "def backoff(attempt: int, base: float = 0.2) -> float:",
        "    return min(30.0, base * 2 ** attempt) * random.uniform(0.5, 1.5)",
        "",
    ]
    out = []
    for n in range(first, first + lines):
        line = body[n - 1] if n <= len(body) else f"    value_{n} = compute({n}, attempt)  # step {n}"
        out.append(f"{n:>6}\u2192{line}")
    return "\n".join(out)


def long_session(rounds: int = 40) -> tuple[bytes, dict[str, bytes]]:
    """~17 messages per round; the default makes ~520 messages over ~42 minutes."""
    b = TranscriptBuilder(start="2026-02-10T20:20:00Z", step_seconds=4.8)
    b.prompt("The retry test is flaky on CI. Find out why, fix it, and commit each fix separately.")
    b.thinking("Start by reading the retry module and running the test a few times.")
    b.assistant_text("I'll read the retry code and reproduce the failure first.")
    b.new_response().tool_call("Read", {"file_path": "/work/app/app/retry.py"}, result=_source("retry.py", 60))
    b.new_response().tool_call(
        "Read", {"file_path": "/work/app/app/backoff.py"}, result=_source("backoff.py", 900)
    )  # ~45k characters: past the inline limit
    sub = b.subagent("a5f2c1d")
    sub.user(BOILERPLATE + "Find where the retry policy and backoff are defined and tested.")
    sub.meta("<system-reminder>\nThis is a reminder that your todo list is currently empty.\n</system-reminder>")
    sub.tool_call("Grep", {"pattern": "def backoff"}, result="app/backoff.py:6:def backoff(attempt")
    sub.meta("<system-reminder>\nWhenever you read a file, consider whether it looks malicious.\n</system-reminder>")
    sub.new_response().tool_call(
        "Read", {"file_path": "/work/app/tests/test_retry.py"}, result=_source("test_retry.py", 40)
    )
    sub.new_response().assistant_text(REPORT)
    b.new_response().task(
        "Locate retry code",
        BOILERPLATE + "Find where the retry policy and backoff are defined and tested.",
        agent_id="a5f2c1d",
        result=REPORT,
        subagent_type="Explore",
        usage={"total_tokens": 33894, "tool_uses": 9, "duration_ms": 38799},
    )
    compactor = None
    for n in range(1, rounds + 1):
        b.new_response().thinking(f"Round {n}: the jitter makes attempt {n} exceed the test's timeout.")
        b.assistant_text(f"Round {n}: tightening the bound on attempt {n}.")
        for name in ("retry.py", "backoff.py", "test_retry.py"):
            b.new_response().tool_call(
                "Edit",
                {"file_path": f"/work/app/app/{name}", "old_string": f"bound = {n}", "new_string": f"bound = {n + 1}"},
                result="The file has been updated.",
            )
        failing = n % 4 == 0
        output = (
            f"FAILED tests/test_retry.py::test_retry_gives_up - AssertionError: waited {n}.{n}s > 5s\n"
            + "E   assert 5.8 <= 5\n" * 3
            if failing
            else f"{40 + n} passed in 1.{n:02d}s"
        )
        b.new_response().tool_call(
            "Bash", {"command": "pytest -q tests/test_retry.py"}, result=output, is_error=failing
        )
        if n % 5 == 0:
            b.new_response().tool_call(
                "Bash",
                {"command": f"git add -A && git commit -m 'Bound retry jitter, round {n}'"},
                result=f"[fix-retry {n:07x}] Bound retry jitter, round {n}\n 3 files changed",
            )
        b.new_response().tool_call(
            "Read", {"file_path": "/work/app/app/retry.py", "offset": n * 10}, result=_source("retry.py", 25, n * 10)
        )
        if n == rounds // 2:
            b.compact("The agent is bounding retry jitter round by round.", trigger="auto", pre_tokens=168_000)
            compactor = TranscriptBuilder(b.session_id, start=b.clock, agent_id="acompact-e1f845", step_seconds=2)
            compactor.meta("<system-reminder>\nSummarise the conversation for continuation.\n</system-reminder>")
            compactor.user("Write a summary of the conversation so far.")
            compactor.assistant_text("Summary: retry jitter is being bounded; tests pass except on slow runners.")
        if n == rounds // 2 + 1:
            b.prompt("Keep going, and make the timeout configurable too.")
    b.new_response().assistant_text(
        "Done: the jitter is bounded, the timeout is configurable, all tests pass."
    ).turn_end()
    agents = {"a5f2c1d": sub.build()}
    if compactor is not None:
        agents["acompact-e1f845"] = compactor.build()
    return b.build(), agents

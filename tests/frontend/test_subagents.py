"""Sub-agents: in time order, folded, with type/model/tokens/tool uses/duration; report once; reminders folded."""

from __future__ import annotations

import re

import pytest

from frontend.session_page.tools import agent_report
from tests.client.transcript_builder import TranscriptBuilder

pytestmark = pytest.mark.django_db

BOILERPLATE = "Brief-7f3: " + "You are a careful research agent. " * 40
REPORT = "The flags are documented in README.md, section Usage."


def _transcript() -> tuple[bytes, dict[str, bytes]]:
    b = TranscriptBuilder(start="2026-02-10T20:20:00Z", step_seconds=5)
    b.prompt("Document the --verbose flag")
    b.tool_call("Read", {"file_path": "/work/app/cli.py"}, result="def main(): ...")
    sub = b.subagent("a2898e3")
    sub.user(BOILERPLATE)
    sub.meta("<system-reminder>\nThe todo list is empty. Remember to use TodoWrite.\n</system-reminder>")
    sub.tool_call("Grep", {"pattern": "--verbose"}, result="README.md:3")
    sub.assistant_text(REPORT)
    b.new_response().task(
        "Find flag docs",
        BOILERPLATE,
        agent_id="a2898e3",
        result=REPORT,
        subagent_type="Explore",
        usage={"total_tokens": 33894, "tool_uses": 9, "duration_ms": 38799},
    )
    # the compaction agent ran at 20:24, before the second prompt; the document appends it at the end
    compactor = TranscriptBuilder(b.session_id, start="2026-02-10T20:24:00Z", agent_id="acompact-e1f845")
    compactor.meta("<system-reminder>\nCompact the conversation.\n</system-reminder>")
    compactor.user("Summarise the conversation so far.").assistant_text("Summary: the flag is documented.")
    b.at("2026-02-10T21:03:00Z").prompt("Now add a test").assistant_text("Added.").turn_end()
    return b.build(), {"a2898e3": sub.build(), "acompact-e1f845": compactor.build()}


@pytest.fixture
def page(client, world, make_session) -> str:
    raw, agents = _transcript()
    session = make_session(world.project, world.member, raw, subagents=agents, seed="subagents")
    client.force_login(world.viewer)
    return client.get(f"/p/{world.project.slug}/s/{session.pk}").content.decode().split('id="cards"')[1]


def test_a_task_call_is_folded_with_the_agent_facts_in_its_header(page) -> None:
    call = re.search(r'<details class="tool agent-call has-agent"><summary>(.*?)</summary>', page, re.S)
    assert call, "the Task call is folded by default"
    header = re.sub(r"<[^>]+>", " ", call.group(1))
    for fact in ("Find flag docs", "Explore", "claude-haiku-4-5", "33.9k tokens", "9 tool uses", "39 s"):
        assert fact in header, fact
    assert "&lt;usage&gt;" not in page and "duration_ms" not in page and "agentId:" not in page


def test_the_report_and_the_prompt_are_shown_once(page) -> None:
    assert page.count(REPORT) == 1
    assert page.count("Brief-7f3") == 1  # in the folded prompt section only
    assert '<details class="tool-section agent-prompt"' in page


def test_injected_reminders_are_folded(page) -> None:
    reminders = re.findall(r'<details class="event meta"[^>]*><summary>.*?System reminder', page, re.S)
    assert len(reminders) == 2


def test_an_unlinked_agent_sits_where_it_ran_folded(page) -> None:
    run = page.index('class="card agent-run"')
    assert page.index("Document the --verbose flag") < run < page.index("Now add a test")
    block = page[run : page.index("</article>", run)]
    assert "Compaction agent" in block and re.search(r'<details class="tool agent-call"><summary>', block)


@pytest.mark.parametrize(
    "text, report, usage",
    [
        (
            "Done.\n\nagentId: a1 (for resuming)\n<usage>total_tokens: 5\ntool_uses: 1\nduration_ms: 7</usage>",
            "Done.",
            {"total_tokens": 5, "tool_uses": 1, "duration_ms": 7},
        ),
        ("Done.<usage>total_tokens: 5\nrm -rf: 1</usage>", "Done.<usage>total_tokens: 5\nrm -rf: 1</usage>", {}),
        ("Done.<usage>" + "total_tokens: 5\n" * 50_000 + "</usage>", None, {}),
        ("<usage>" * 100_000 + "</usage>", None, {}),
        ("Done. <usage>total_tokens: 99999999999999999999</usage>", None, {}),
    ],
)
def test_the_usage_trailer_parser_is_strict_and_bounded(text, report, usage) -> None:
    parsed = agent_report(text)
    assert parsed.usage == usage
    if report is not None:
        assert parsed.text == report


def test_parallel_1_0_sub_agents_fold_one_under_each_task_call(client, world, make_session) -> None:
    b = TranscriptBuilder(version="1.0.89").prompt("audit both modules")
    b.tool_use("Task", {"description": "Audit A", "prompt": "Audit module a"})
    use_a, task_a = b.last_uuid, b.last_tool_id
    b.tool_use("Task", {"description": "Audit B", "prompt": "Audit module b"})
    use_b, task_b = b.last_uuid, b.last_tool_id
    a = b.subagent("x").user("Audit module a").tool_call("Read", {"file_path": "a.py"}, result="alpha-src")
    c = b.subagent("y").user("Audit module b").tool_call("Read", {"file_path": "b.py"}, result="beta-src")
    b.inline(a, c).tool_result(task_a, "a ok", parent=use_a).tool_result(task_b, "b ok", parent=use_b)
    session = make_session(world.project, world.member, b.build(), seed="inline-agents")
    client.force_login(world.viewer)
    page = client.get(f"/p/{world.project.slug}/s/{session.pk}").content.decode()
    calls = re.split(r'<details class="tool agent-call has-agent"[^>]*>', page)[1:]
    assert len(calls) == 2, "one folded sub-agent per Task call"
    assert "Audit A" in calls[0] and "alpha-src" in calls[0] and "beta-src" not in calls[0]
    assert "Audit B" in calls[1] and "beta-src" in calls[1]

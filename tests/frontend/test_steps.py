"""The steps outline (prompts, commits, errors, edit bursts), its minimap, and message permalinks."""

from __future__ import annotations

import re
import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from frontend.session_page.steps import is_git_commit, outline
from sessionledger.core.formats import parse_transcript
from tests.client.transcript_builder import TranscriptBuilder
from tests.frontend.conftest import long_transcript

pytestmark = pytest.mark.django_db


def _autonomous() -> bytes:
    """One prompt, then an agent that edits, fails a test, edits again and commits: one turn."""
    b = TranscriptBuilder(start="2026-02-10T09:00:00Z", step_seconds=3)
    b.prompt("Make the retry test pass")
    for name in ("retry.py", "backoff.py", "retry.py"):
        b.new_response().tool_call(
            "Edit", {"file_path": f"/work/app/{name}", "old_string": "a", "new_string": "b"}, result="ok"
        )
    b.new_response().tool_call("Bash", {"command": "pytest -q"}, result="E   AssertionError: flaky", is_error=True)
    b.new_response().tool_call("Write", {"file_path": "/work/app/clock.py", "content": "x = 1"}, result="ok")
    b.new_response().tool_call(
        "Bash", {"command": "git add -A && git commit -m 'Fix retry'"}, result="[main 1a2b3c4] Fix retry"
    )
    b.new_response().assistant_text("Committed.").turn_end()
    return b.build()


@pytest.fixture
def session(world, make_session):
    return make_session(world.project, world.member, _autonomous(), seed="steps")


def _get(client, world, path: str):
    client.force_login(world.viewer)
    return client.get(path)


def test_the_outline_lists_prompts_commits_errors_and_edit_bursts(client, world, session) -> None:
    html = _get(client, world, f"/p/{world.project.slug}/s/{session.pk}").content.decode()
    nav = html[html.index('id="step-nav"') : html.index("</ol>", html.index('id="step-nav"'))]
    kinds = re.findall(r'data-kind="(\w+)"', nav)
    assert kinds == ["prompt", "edit", "error", "edit", "commit"]
    assert "3 edits: retry.py, backoff.py" in nav and "1 edit: clock.py" in nav
    assert "Bash `pytest -q` — E AssertionError: flaky" in nav
    assert "1a2b3c4 Fix retry" in nav and "git commit" not in nav
    assert "1 prompt · 1 commit · 1 error · 2 edit bursts" in html
    # every step links to an element of the page, and the minimap has one tick per step
    anchors = re.findall(r'data-anchor="(m-[0-9A-Za-z-]+)"', nav)
    assert len(anchors) == 5
    for anchor in anchors:
        assert f'id="{anchor}"' in html.split('id="cards"')[1], anchor
    minimap = html[html.index('<svg class="minimap"') : html.index("</svg>", html.index('<svg class="minimap"'))]
    assert minimap.count("<rect") == 5 and 'class="tick k-error"' in minimap


def test_git_commit_detection_is_per_simple_command() -> None:
    assert is_git_commit("git add . && git commit -m x")
    assert is_git_commit("cd repo; git -C sub commit --amend --no-edit")
    assert not is_git_commit("echo commit; git status")
    assert not is_git_commit("git" + " x" * 100_000)


def test_sub_agents_edits_are_steps_named_after_the_agent(client, world, make_session) -> None:
    """A 1.0.x session that delegates: two parallel sub-agents write the files, the main agent only
    reads. Their edits are the outline's edit bursts, one per agent, each linking into its fold."""
    b = TranscriptBuilder(version="1.0.89").prompt("split the parser into modules")
    b.tool_use("Task", {"description": "Write lexer", "prompt": "Write the lexer modules"})
    use_a, task_a = b.last_uuid, b.last_tool_id
    b.tool_use("Task", {"description": "Write grammar", "prompt": "Write the grammar modules"})
    use_b, task_b = b.last_uuid, b.last_tool_id
    a = b.subagent("x").user("Write the lexer modules")
    for name in ("tokens.py", "lexer.py", "spans.py"):
        a.tool_call("Write", {"file_path": f"/work/app/{name}", "content": "x = 1"}, result="ok")
    a.tool_call("Bash", {"command": "pytest -q tests/lexer"}, result="3 passed")
    a.tool_call("Edit", {"file_path": "/work/app/lexer.py", "old_string": "a", "new_string": "b"}, result="ok")
    c = b.subagent("y").user("Write the grammar modules")
    c.tool_call("Write", {"file_path": "/work/app/grammar.py", "content": "y = 2"}, result="ok")
    b.inline(a, c).tool_result(task_a, "lexer done", parent=use_a).tool_result(task_b, "grammar done", parent=use_b)
    b.new_response().tool_call("Read", {"file_path": "/work/app/lexer.py"}, result="x = 1")
    session = make_session(world.project, world.member, b.build(), seed="agent-edits")
    html = _get(client, world, f"/p/{world.project.slug}/s/{session.pk}").content.decode()
    nav = html[html.index('id="step-nav"') : html.index("</ol>", html.index('id="step-nav"'))]
    assert re.findall(r'data-kind="(\w+)"', nav) == ["prompt", "edit", "edit", "edit"]
    assert "Write lexer (sub-agent): 3 edits: tokens.py, lexer.py, spans.py" in nav
    assert "Write lexer (sub-agent): 1 edit: lexer.py" in nav
    assert "Write grammar (sub-agent): 1 edit: grammar.py" in nav
    assert "3 edit bursts" in html
    cards = html.split('id="cards"')[1]
    for anchor in re.findall(r'data-anchor="(m-\d+)"', nav):
        assert f'id="{anchor}"' in cards, anchor


def test_an_unlinked_sub_agents_edits_are_attributed_to_a_sub_agent() -> None:
    messages = [
        {"index": 0, "role": "user", "kind": "prompt", "content": "go"},
        {"index": 1, "role": "assistant", "kind": "tool_use", "sidechain": True, "agent_id": "a1",
         "tool": {"name": "Edit", "input": {"file_path": "/w/x.py"}}},
    ]  # fmt: skip
    assert [(s.kind, s.label) for s in outline(messages)] == [("prompt", "go"), ("edit", "Sub-agent: 1 edit: x.py")]


def test_steps_on_later_pages_link_to_their_page(client, world, make_session) -> None:
    session = make_session(world.project, world.member, long_transcript(40), seed="long-steps")
    html = _get(client, world, f"/p/{world.project.slug}/s/{session.pk}").content.decode()
    last = re.findall(r'<a href="\?page=(\d+)#(m-[0-9A-Za-z-]+)" data-kind="prompt"', html)[-1]
    later = _get(client, world, f"/p/{world.project.slug}/s/{session.pk}?page={last[0]}").content.decode()
    assert f'id="{last[1]}"' in later


def test_a_message_permalink_serves_the_page_that_holds_it(client, world, make_session) -> None:
    session = make_session(world.project, world.member, long_transcript(40), seed="plink")
    first = _get(client, world, f"/p/{world.project.slug}/s/{session.pk}").content.decode()
    assert "page 1 of" in first
    # a message uuid from the last page: ?at= renders that page, with the message's anchor
    document_uuid = _last_prompt_uuid(session)
    page = _get(client, world, f"/p/{world.project.slug}/s/{session.pk}?at={document_uuid}").content.decode()
    assert f'id="m-{document_uuid}"' in page and "Turn 40: please change module_40.py" in page
    assert f'href="?at={document_uuid}#m-{document_uuid}"' in page
    # the short permalink redirects there
    response = _get(client, world, f"/p/{world.project.slug}/m/{document_uuid}")
    assert response.status_code == 302
    assert response["Location"] == f"/p/{world.project.slug}/s/{session.pk}?at={document_uuid}#m-{document_uuid}"


def test_a_permalink_is_not_found_elsewhere(client, world, session) -> None:
    assert _get(client, world, f"/p/{world.project.slug}/m/{uuid.uuid4()}").status_code == 404
    message = _last_prompt_uuid(session)
    client.force_login(world.outsider)
    assert client.get(f"/p/{world.project.slug}/m/{message}").status_code == 404
    client.force_login(world.other_admin)
    assert client.get(f"/p/{world.other_project.slug}/m/{message}").status_code == 404


def test_a_bad_at_is_ignored(client, world, session) -> None:
    for at in ("nope", "999999", "<script>", "x" * 300):
        response = _get(client, world, f"/p/{world.project.slug}/s/{session.pk}?at={at}")
        assert response.status_code == 200 and "<script>" not in response.content.decode().split('id="cards"')[1]


def _last_prompt_uuid(session) -> str:
    from sessions_app import selectors

    messages = selectors.session_document(session=session)["messages"]
    return next(m["uuid"] for m in reversed(messages) if m["kind"] == "prompt")


def test_the_session_page_costs_the_same_queries_with_more_steps(client, world, make_session) -> None:
    small = make_session(world.project, world.member, long_transcript(2), seed="q-small")
    large = make_session(world.project, world.member, long_transcript(60), seed="q-large")
    client.force_login(world.viewer)

    def count(session) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(f"/p/{world.project.slug}/s/{session.pk}").status_code == 200
        return len(captured.captured_queries)

    count(small)
    assert count(small) == count(large)


def _labels(b: TranscriptBuilder) -> list[tuple[str, str]]:
    return [(step.kind, step.label) for step in outline(parse_transcript(b.build()).messages)]


def test_a_failed_command_is_labelled_with_the_command_and_its_exit_code() -> None:
    b = TranscriptBuilder().prompt("Run the linter")
    b.new_response().tool_call(
        "Bash", {"command": "ruff check src/"}, result="Exit code 1\nsrc/a.py:1: F401", is_error=True
    )
    assert ("error", "Bash `ruff check src/` — exit 1") in _labels(b)


def test_a_failed_test_run_is_labelled_with_the_failing_test() -> None:
    output = "Exit code 1\n....F.\nFAILED tests/test_retry.py::test_backoff_doubles - AssertionError: 2 != 4\n1 failed"
    b = TranscriptBuilder().prompt("Run the tests")
    b.new_response().tool_call("Bash", {"command": "pytest -q tests/"}, result=output, is_error=True)
    assert ("error", "failed tests/test_retry.py::test_backoff_doubles") in _labels(b)


def test_a_heredoc_commit_is_labelled_with_its_hash_and_subject_not_the_shell_command() -> None:
    command = "git commit -m \"$(cat <<'EOF'\nMake retries back off\n\nBody.\nEOF\n)\""
    b = TranscriptBuilder().prompt("Commit it")
    b.new_response().tool_call(
        "Bash", {"command": command}, result="[fix/retry 9f8e7d6] Make retries back off\n 1 file"
    )
    b.new_response().tool_call("Bash", {"command": command}, result="pre-commit hook failed")
    labels = _labels(b)
    assert ("commit", "9f8e7d6 Make retries back off") in labels
    assert ("commit", "commit: Make retries back off") in labels  # no summary line from git: the subject
    assert not any("cat <<" in label for _, label in labels)

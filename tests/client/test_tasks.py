"""Task sessions as beads users work: `bd close` usually runs before the `git commit` that holds
the task's work, and an epic is closed without a start mark (docs/client.md "Task sessions")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.client.conftest import ClaudeSession, ClientEnv, expected_upload, head

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def bd(client_env: ClientEnv, tmp_path: Path) -> None:
    """A `bd` on PATH that says what beads says."""
    bin_dir = tmp_path / "bd-bin"
    bin_dir.mkdir()
    (bin_dir / "bd").write_text('#!/bin/sh\necho "✓ $1 $2: done"\n')
    (bin_dir / "bd").chmod(0o755)
    client_env.vars["PATH"] = f"{bin_dir}:{client_env.vars['PATH']}"


def work(claude: ClaudeSession, repo: Path, name: str) -> None:
    claude.prompt(f"write {name}")
    (repo / name).write_text(f"{name}\n")


def test_a_task_closed_before_its_commit_is_linked_to_the_commit_of_its_work(ledger, repo, claude, bd) -> None:
    base = head(repo)
    claude.bash("bd update SL-42 --status in_progress")
    start = len(claude.content())
    work(claude, repo, "a.py")
    claude.bash("bd close SL-42 --reason implemented")
    closed = len(claude.content())

    assert ledger.sessions(kind="task") == []  # held: the work is not committed yet
    claude.bash("git add -A && git commit -q -m 'Implement SL-42'")

    [task] = ledger.sessions(kind="task")
    assert task.commit_hash == head(repo) != base
    assert (task.task_id, task.requested_status) == ("SL-42", "complete")
    assert (task.start_offset, task.end_offset) == (start, closed)
    assert ledger.raw(task) == expected_upload(claude.content()[start:closed])
    assert ledger.session_for(head(repo)).kind == "checkpoint"


def test_bd_close_and_commit_in_one_command_link_the_task_to_that_commit(ledger, repo, claude, bd) -> None:
    work(claude, repo, "a.py")
    claude.bash("bd close SL-1 && git add -A && git commit -q -m 'Close SL-1'")

    [task] = ledger.sessions(kind="task")
    checkpoint = ledger.session_for(head(repo))
    assert task.commit_hash == head(repo)
    assert task.start_offset == 0 and task.end_offset == checkpoint.end_offset


def test_a_task_committed_during_its_span_is_linked_at_once(ledger, repo, claude, bd) -> None:
    claude.bash("bd update SL-2 --status in_progress")
    work(claude, repo, "a.py")
    claude.bash("git add -A && git commit -q -m 'Do SL-2'")
    done = head(repo)
    claude.bash("bd close SL-2")

    [task] = ledger.sessions(kind="task")
    assert task.commit_hash == done


def test_an_epic_without_a_start_mark_covers_only_its_own_span(ledger, repo, claude, bd) -> None:
    claude.builder.tool_call("Bash", {"command": "cat big.log"}, result="log line\n" * 20_000)  # early bulk
    claude.flush()
    claude.bash("bd update SL-10.1 --status in_progress")
    work(claude, repo, "child.py")
    claude.bash("bd close SL-10.1")
    child_end = len(claude.content())
    claude.prompt("wrap up the epic")
    claude.bash("bd close SL-10")
    claude.bash("git add -A && git commit -q -m 'Child and epic'")

    tasks = {t.task_id: t for t in ledger.sessions(kind="task")}
    epic = tasks["SL-10"]
    assert epic.start_offset == child_end  # not 0: the conversation is not sent again
    assert epic.raw_size_bytes < 10_000 < tasks["SL-10.1"].start_offset
    assert {t.commit_hash for t in tasks.values()} == {head(repo)}


def test_a_closed_task_with_no_commit_goes_when_the_session_ends(ledger, repo, claude, client_env, bd) -> None:
    work(claude, repo, "notes.txt")
    claude.bash("bd close SL-3 --reason 'nothing to commit'")
    status = json.loads(client_env.cli("status", "--json", cwd=repo).stdout)
    claude.end()

    assert [e["state"] for e in status["queue"]] == ["awaiting_commit"]
    assert "waiting for the commit of its work" in status["queue"][0]["reason"]
    [task] = ledger.sessions(kind="task")
    assert task.commit_hash == head(repo)

"""Capture on commit, end to end: a Claude-Code-like session, the real hook as a subprocess, and
the live server (ingest → S3 → Postgres). Uploads are inline here (deterministic); the detached
uploader has its own tests in test_queue.py."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.client.conftest import expected_upload, git, head

pytestmark = pytest.mark.django_db(transaction=True)


def patch_id(repo) -> str:
    shown = subprocess.run(["git", "show", "HEAD"], cwd=repo, capture_output=True, check=True).stdout
    return (
        subprocess.run(["git", "patch-id", "--stable"], input=shown, capture_output=True, check=True)
        .stdout.split()[0]
        .decode()
    )


SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_a_commit_uploads_exactly_the_new_lines_slimmed_and_redacted(ledger, repo, claude) -> None:
    claude.prompt(f"Deploy with the token {SECRET} please")
    claude.builder.progress("bash_progress", output="x" * 5000, fullOutput="y" * 5000)
    (repo / "app.py").write_text("print('hi')\n")
    claude.bash("git add -A && git commit -q -m 'Add app'")

    session = ledger.session_for(head(repo))
    assert ledger.raw(session) == expected_upload(claude.content())
    assert SECRET.encode() not in ledger.raw(session) and b"[REDACTED:github]" in ledger.raw(session)
    assert session.redaction == {"github": 2}  # the prompt and the reply quoting it
    assert (session.start_offset, session.end_offset) == (0, len(claude.content()))
    assert session.commit_message == "Add app" and session.feature_branch == "main"
    assert session.diff_stat == {"files": 1, "insertions": 1, "deletions": 0}
    assert session.files_touched == ["app.py"]
    assert session.patch_id == patch_id(repo)
    assert session.agent_session_id == claude.session_id and session.agent_version == "2.1.39"


def test_a_second_commit_captures_only_the_delta(ledger, repo, claude) -> None:
    claude.prompt("first")
    (repo / "a.py").write_text("a = 1\n")
    claude.bash("git add -A && git commit -q -m 'Add a'")
    first_end = len(claude.content())

    claude.prompt("second")
    (repo / "b.py").write_text("b = 2\n")
    claude.bash("git add -A && git commit -q -m 'Add b'")

    first, second = ledger.session_for(git(repo, "rev-parse", "HEAD~1")), ledger.session_for(head(repo))
    assert (second.start_offset, second.end_offset) == (first_end, len(claude.content()))
    assert ledger.raw(second) == expected_upload(claude.content()[first_end:])
    assert second.previous_id == first.pk


def test_a_failed_commit_captures_nothing(ledger, repo, claude, client_env) -> None:
    claude.prompt("commit please")
    result = claude.bash("git commit -m 'nothing to commit'")
    assert result.returncode != 0
    assert client_env.queue() == [] and ledger.sessions() == []


def test_an_amend_is_captured_for_the_new_hash_and_linked_to_the_old(ledger, repo, claude) -> None:
    claude.prompt("add a")
    (repo / "a.py").write_text("a = 1\n")
    claude.bash("git add -A && git commit -q -m 'Add a'")
    original = head(repo)

    claude.prompt("fix the message")
    claude.bash("git commit -q --amend -m 'Add module a'")

    amended = ledger.session_for(head(repo))
    assert amended.amends == original and amended.commit_message == "Add module a"
    assert ledger.session_for(original).amends is None  # the old session stays


def test_a_commit_with_git_dash_c_from_another_directory_is_captured(ledger, repo, claude, tmp_path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    claude.prompt("commit from outside")
    (repo / "c.py").write_text("c = 3\n")
    claude.bash(f"git -C {repo} add -A && git -C {repo} commit -q -m 'Add c'", cwd=outside)

    assert ledger.session_for(head(repo)).commit_message == "Add c"


def test_a_commit_made_by_a_script_is_captured(ledger, repo, claude) -> None:
    (repo / "release.sh").write_text("#!/bin/sh\necho v1 > VERSION && git add -A && git commit -q -m 'Release v1'\n")
    claude.prompt("cut a release")
    claude.bash("sh release.sh")

    assert ledger.session_for(head(repo)).commit_message == "Release v1"


def test_a_bash_call_that_moves_nothing_does_nothing(ledger, repo, claude, client_env) -> None:
    claude.prompt("look around")
    claude.bash("ls")  # first sight of the repository: HEAD (an hour old) is observed, not captured
    state_files = sorted(p.relative_to(client_env.state_dir) for p in client_env.state_dir.rglob("*"))
    mtimes = {p: p.stat().st_mtime_ns for p in client_env.state_dir.rglob("*")}
    log_before = client_env.log()

    claude.bash("ls -la && git status")

    assert sorted(p.relative_to(client_env.state_dir) for p in client_env.state_dir.rglob("*")) == state_files
    assert {p: p.stat().st_mtime_ns for p in client_env.state_dir.rglob("*")} == mtimes
    assert client_env.log() == log_before  # no uploader ran (it logs every start of work)
    assert client_env.queue() == [] and ledger.sessions() == []


def test_a_checkout_of_an_older_commit_is_not_captured(ledger, repo, claude, client_env) -> None:
    claude.prompt("work")
    (repo / "a.py").write_text("a = 1\n")
    claude.bash("git add -A && git commit -q -m 'Add a'")
    claude.bash("git checkout -q HEAD~1")
    assert len(ledger.sessions()) == 1 and client_env.queue() == []


def test_sub_agent_transcripts_are_captured_with_their_own_offsets(ledger, repo, claude) -> None:
    child = claude.builder.subagent("a2898e3").user("Find the parser").assistant_text("It is in parse.py.")
    agent_file = claude.subagent_file("a2898e3")
    agent_file.write_bytes(child.build())
    claude.builder.task("find parser", "Find the parser", agent_id="a2898e3", result="It is in parse.py.")
    claude.prompt("use it")
    (repo / "a.py").write_text("a = 1\n")
    claude.bash("git add -A && git commit -q -m 'Add a'")
    first_size = agent_file.stat().st_size

    with agent_file.open("ab") as handle:
        before = len(child.build())
        handle.write(child.assistant_text("More findings.").build()[before:])
    (repo / "b.py").write_text("b = 1\n")
    claude.bash("git add -A && git commit -q -m 'Add b'")

    first = ledger.session_for(git(repo, "rev-parse", "HEAD~1"))
    second = ledger.session_for(head(repo))
    assert [(s["agent_id"], s["start_offset"], s["end_offset"]) for s in first.subagents] == [
        ("a2898e3", 0, first_size)
    ]
    assert [(s["agent_id"], s["start_offset"], s["end_offset"]) for s in second.subagents] == [
        ("a2898e3", first_size, agent_file.stat().st_size)
    ]


def test_session_end_captures_the_conversation_after_the_last_commit(ledger, repo, claude) -> None:
    claude.prompt("add a")
    (repo / "a.py").write_text("a = 1\n")
    claude.bash("git add -A && git commit -q -m 'Add a'")
    committed = len(claude.content())
    claude.prompt("explain what you did, no more changes")

    claude.end()

    trailing = ledger.sessions(kind="end")
    assert len(trailing) == 1 and trailing[0].commit_hash == head(repo)
    assert (trailing[0].start_offset, trailing[0].end_offset) == (committed, len(claude.content()))
    assert ledger.raw(trailing[0]) == expected_upload(claude.content()[committed:])
    claude.end()  # nothing new since: no second end session
    assert len(ledger.sessions(kind="end")) == 1


def test_a_segment_over_the_servers_limit_is_fitted_after_a_413(ledger, repo, claude, settings) -> None:
    settings.SESSIONLEDGER_MAX_RAW_BYTES = 60_000
    claude.prompt("read the big log")
    claude.builder.tool_call("Bash", {"command": "cat big.log"}, result="line of log output\n" * 8000)
    (repo / "a.py").write_text("a = 1\n")
    claude.bash("git add -A && git commit -q -m 'Add a'")

    session = ledger.session_for(head(repo))
    raw = ledger.raw(session)
    assert len(raw) <= 60_000 < len(claude.content())
    assert b"sessionledger truncated" in raw
    assert all(json.loads(line) for line in raw.splitlines())  # still valid JSONL

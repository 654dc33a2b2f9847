"""`import`: existing transcripts of the repository, cut at the commits made during them, uploaded
through the queue; a second run uploads nothing."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sessionledger.core.formats import encode_project_dir
from tests.client.conftest import ClientEnv, expected_upload, git, head
from tests.client.transcript_builder import TranscriptBuilder

pytestmark = pytest.mark.django_db(transaction=True)


def project_dir(env: ClientEnv, cwd: Path) -> Path:
    path = env.home / ".claude" / "projects" / encode_project_dir(str(cwd))
    path.mkdir(parents=True, exist_ok=True)
    return path


def past_session(
    repo: Path, env: ClientEnv, commits: int, *, minutes_ago: int = 30
) -> tuple[Path, list[str], list[int]]:
    """A transcript whose Bash calls made `commits` real commits at the times it records.

    Returns (transcript path, commit hashes, byte offset just after each commit's tool_result).
    """
    session = str(uuid.uuid4())
    b = TranscriptBuilder(session, cwd=str(repo), start=datetime.now(UTC) - timedelta(minutes=minutes_ago))
    made, cuts = [], []
    b.prompt("Let us build the app").assistant_text("Sure.").turn_end()
    for n in range(commits):
        b.prompt(f"add module {n}").assistant_text("On it.")
        b.new_response().tool_use("Bash", {"command": f"git add -A && git commit -q -m 'Add module {n}'"})
        tool_id, when = b.last_tool_id, b.clock
        (repo / f"m{n}.py").write_text(f"N = {n}\n")
        stamp = f"{int(when.timestamp()) + 1} +0000"
        git(repo, "add", "-A", env=env.env())
        git(repo, "commit", "-q", "-m", f"Add module {n}", env=env.env(GIT_COMMITTER_DATE=stamp, GIT_AUTHOR_DATE=stamp))
        made.append(head(repo))
        b.at(when + timedelta(seconds=3)).tool_result(tool_id, f"[main {made[-1][:7]}] Add module {n}")
        cuts.append(len(b.build()))
        b.new_response().assistant_text(f"Module {n} is committed.").turn_end()
    b.prompt("thanks").assistant_text("You're welcome.").turn_end()
    path = project_dir(env, repo) / f"{session}.jsonl"
    path.write_bytes(b.build())
    return path, made, cuts


def test_import_creates_one_segment_per_commit_and_a_second_run_creates_none(ledger, repo, client_env) -> None:
    path, commits, cuts = past_session(repo, client_env, 3)
    raw, session_id = path.read_bytes(), path.stem

    first = client_env.cli("import", cwd=repo)

    assert first.returncode == 0, first.stderr
    assert "Imported 4 segments into acme-api." in first.stdout
    assert "] 4/4 end" in first.stderr  # the progress bar (one line per step off a terminal)
    segments = ledger.sessions(agent_session_id=session_id)
    checkpoints = [s for s in segments if s.kind == "checkpoint"]
    assert [s.commit_hash for s in checkpoints] == commits
    assert [(s.start_offset, s.end_offset) for s in segments] == [
        (0, cuts[0]),
        (cuts[0], cuts[1]),
        (cuts[1], cuts[2]),
        (cuts[2], len(raw)),
    ]
    assert segments[-1].kind == "end" and segments[-1].commit_hash == commits[-1]
    assert all(ledger.raw(s) == expected_upload(raw[s.start_offset : s.end_offset]) for s in segments)
    assert checkpoints[1].commit_message == "Add module 1" and checkpoints[1].diff_stat["files"] == 1
    stitched = ledger.api.get(f"/api/v1/projects/{ledger.slug}/agent-sessions/{session_id}/transcript")
    assert stitched.content == expected_upload(raw)

    second = client_env.cli("import", cwd=repo)

    assert second.returncode == 0, second.stderr
    assert "Nothing new to import" in second.stdout and "all 4 segment(s) already on the server" in second.stdout
    assert len(ledger.sessions()) == len(segments) and client_env.queue() == []


def test_import_resumes_where_the_last_import_stopped_when_the_conversation_went_on(ledger, repo, client_env) -> None:
    path, _, _ = past_session(repo, client_env, 1, minutes_ago=40)
    assert client_env.cli("import", cwd=repo).returncode == 0
    before = path.read_bytes()
    more = TranscriptBuilder(path.stem, cwd=str(repo), start=datetime.now(UTC) - timedelta(minutes=5))
    more._counter = 1000  # fresh uuids: the conversation goes on, it is not replayed
    more.prompt("one more module").new_response().tool_use("Bash", {"command": "git commit -am 'More'"})
    (repo / "m0.py").write_text("N = 99\n")
    stamp = f"{int(more.clock.timestamp())} +0000"
    git(repo, "commit", "-q", "-am", "More", env=client_env.env(GIT_COMMITTER_DATE=stamp, GIT_AUTHOR_DATE=stamp))
    more.tool_result(more.last_tool_id, "[main] More").assistant_text("Done.").turn_end()
    path.write_bytes(before + more.build())

    result = client_env.cli("import", cwd=repo)

    assert result.returncode == 0, result.stderr
    assert "Imported 2 segments" in result.stdout
    segments = ledger.sessions(agent_session_id=path.stem)
    assert [s.kind for s in segments] == ["checkpoint", "end", "checkpoint", "end"]
    assert segments[2].start_offset == len(before) and segments[2].commit_hash == head(repo)
    stitched = ledger.api.get(f"/api/v1/projects/{ledger.slug}/agent-sessions/{path.stem}/transcript")
    assert stitched.status_code == 200 and stitched.content == expected_upload(path.read_bytes())


def test_import_skips_other_directories_hook_captured_and_old_transcripts(
    ledger, repo, claude, client_env, tmp_path
) -> None:
    sibling = tmp_path / "app-v2"  # encodes to a name that starts like the repository's
    sibling.mkdir()
    elsewhere = TranscriptBuilder(str(uuid.uuid4()), cwd=str(sibling)).prompt("not this repo").build()
    (project_dir(client_env, sibling) / "other.jsonl").write_bytes(elsewhere)
    claude.prompt("captured live")
    (repo / "live.py").write_text("x = 1\n")
    claude.bash("git add -A && git commit -q -m 'Live'")
    before = len(ledger.sessions())

    tomorrow = (datetime.now() + timedelta(days=1)).date().isoformat()
    assert "No agent transcripts" in client_env.cli("import", "--since", tomorrow, cwd=repo).stdout
    result = client_env.cli("import", cwd=repo)

    assert result.returncode == 0, result.stderr
    assert f"{claude.path.name}: skipped, captured by the hooks" in result.stdout
    assert "other.jsonl" not in result.stdout and len(ledger.sessions()) == before


def test_import_attaches_sub_agents_and_keeps_a_session_without_commits(ledger, repo, client_env) -> None:
    session = str(uuid.uuid4())
    b = TranscriptBuilder(session, cwd=str(repo), start=datetime.now(UTC) - timedelta(minutes=20))
    b.prompt("Review the code").new_response().task("Review", "Review app.py", agent_id="c0ffee1")
    sub = b.subagent("c0ffee1").user("Review app.py").assistant_text("Looks fine.")
    b.assistant_text("The review found nothing.").turn_end()
    path = project_dir(client_env, repo) / f"{session}.jsonl"
    path.write_bytes(b.build())
    agents = path.parent / session / "subagents"
    agents.mkdir(parents=True)
    (agents / "agent-c0ffee1.jsonl").write_bytes(sub.build())

    result = client_env.cli("import", "--dry-run", cwd=repo)
    assert "1 new segment(s): end" in result.stdout and "nothing queued" in result.stdout
    assert ledger.sessions() == []

    assert client_env.cli("import", cwd=repo).returncode == 0
    (only,) = ledger.sessions(agent_session_id=session)
    assert only.kind == "end" and only.commit_hash == git(repo, "rev-parse", "HEAD")
    assert [s["agent_id"] for s in only.subagents] == ["c0ffee1"]


def test_import_fails_clearly_outside_a_repository_and_on_a_bad_date(ledger, client_env, repo, tmp_path) -> None:
    outside = client_env.cli("import", cwd=tmp_path)
    assert outside.returncode == 1 and "not inside a git repository" in outside.stderr
    bad = client_env.cli("import", "--since", "last tuesday", cwd=repo)
    assert bad.returncode == 1 and bad.stderr.strip().startswith("sessionledger: --since: not a date")


def test_import_links_a_session_without_a_branch_to_the_worktree_it_ran_in(ledger, repo, client_env, tmp_path) -> None:
    """Claude Code 1.0.x records no branch: the session belongs to the worktree of its cwd, not to
    HEAD of the directory `import` is run from."""
    tree = tmp_path / "app-feature"
    git(repo, "worktree", "add", "-q", "-b", "feature/retry", str(tree), env=client_env.env())
    (tree / "retry.py").write_text("RETRIES = 3\n")
    git(tree, "add", "-A", env=client_env.env())
    stamp = f"{int((datetime.now(UTC) - timedelta(minutes=10)).timestamp())} +0000"
    git(tree, "commit", "-q", "-m", "Add retry", env=client_env.env(GIT_COMMITTER_DATE=stamp, GIT_AUTHOR_DATE=stamp))
    session = str(uuid.uuid4())
    b = TranscriptBuilder(session, cwd=str(tree), git_branch="", start=datetime.now(UTC) - timedelta(minutes=5))
    b.prompt("Explain the retry module").assistant_text("It retries three times.").turn_end()
    (project_dir(client_env, tree) / f"{session}.jsonl").write_bytes(b.build())

    result = client_env.cli("import", cwd=repo)

    assert result.returncode == 0, result.stderr
    (only,) = ledger.sessions(agent_session_id=session)
    assert only.commit_hash == head(tree) != head(repo)
    assert only.feature_branch == "feature/retry"

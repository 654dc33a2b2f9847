"""Work committed after a /clear and before the next prompt belongs to the conversation that wrote
it (docs/design.md §7 "/clear"): its commit gets that conversation as a checkpoint and its lines
that conversation's steps, whether the git post-commit hook or the next conversation's tool hook
sees the commit first — and once the next conversation has prompted, its commits are its own."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.client.attribution_helpers import agent_write
from tests.client.conftest import ClaudeSession, ClientEnv, git, head
from tests.client.transcript_builder import TranscriptBuilder

pytestmark = pytest.mark.django_db(transaction=True)


def wrote_then_cleared(repo: Path, claude: ClaudeSession) -> str:
    """The agent writes a module it does not commit, then the user types /clear; the step's uuid."""
    claude.prompt("write the reader; I will commit it")
    step = agent_write(claude, repo, "reader.py", "def read(path):\n    return open(path).read()\n")
    claude.builder.assistant_text("reader.py is ready to commit.")
    claude.flush()
    claude.end("clear")
    return step


def next_conversation(env: ClientEnv, repo: Path) -> ClaudeSession:
    """The conversation /clear starts: its transcript opens with the /clear command, stamped now."""
    after = ClaudeSession(env, repo)
    now = datetime.now(UTC)  # after the clear; each line a millisecond later, as a real session stamps them
    after.builder = TranscriptBuilder(after.session_id, cwd=str(repo), start=now, step_seconds=0.001)
    after.builder.slash_command("clear")
    after.flush()
    return after


def commit_by_hand(env: ClientEnv, repo: Path, message: str) -> str:
    git(repo, "add", "-A", env=env.env())
    git(repo, "commit", "-q", "-m", message, env=env.env())
    return head(repo)


def install_git_hook(env: ClientEnv, repo: Path) -> None:
    result = env.cli("init", "--git-hook", "--project", "acme-api", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_hand_commit_after_clear_goes_to_the_cleared_conversation_with_its_lines(
    ledger, repo, client_env, claude
) -> None:
    install_git_hook(client_env, repo)
    step = wrote_then_cleared(repo, claude)
    after = next_conversation(client_env, repo)
    (cleared,) = ledger.sessions(kind="clear")

    sha = commit_by_hand(client_env, repo, "Add the reader")

    session = ledger.wait_for(lambda: ledger.sessions(commit_hash=sha, kind="checkpoint"))[0]
    assert session.agent_session_id == claude.session_id != after.session_id
    assert (session.start_offset, session.end_offset) == (cleared.start_offset, cleared.end_offset)
    record = ledger.api.get(f"/api/v1/projects/{ledger.slug}/sessions/{session.pk}/attribution").json()
    (entry,) = record["files"]
    assert entry["path"] == "reader.py"
    assert [c["dev.sessionledger.step"] for c in entry["conversations"]] == [step]
    assert record["metadata"]["dev.sessionledger"]["ai_lines"] == 2
    assert not ledger.sessions(agent_session_id=after.session_id)


def test_the_next_conversations_tool_hook_does_not_take_a_commit_made_before_its_prompt(
    ledger, repo, client_env, claude
) -> None:
    wrote_then_cleared(repo, claude)
    after = next_conversation(client_env, repo)
    sha = commit_by_hand(client_env, repo, "Add the reader")  # no git hook: nobody sees it yet
    after.builder.at(datetime.now(UTC) + timedelta(seconds=2))  # the prompt comes after the commit
    after.prompt("what is in the log?")

    after.bash("git log --oneline -1")

    (session,) = ledger.sessions(commit_hash=sha, kind="checkpoint")
    assert session.agent_session_id == claude.session_id
    assert not ledger.sessions(agent_session_id=after.session_id)


def test_once_the_next_conversation_has_prompted_its_commits_are_its_own(ledger, repo, client_env, claude) -> None:
    install_git_hook(client_env, repo)
    wrote_then_cleared(repo, claude)
    after = next_conversation(client_env, repo)
    after.prompt("add a writer too, and commit everything")
    agent_write(after, repo, "writer.py", "def write(path, text):\n    open(path, 'w').write(text)\n")

    after.bash("git add -A && git commit -q -m 'Add reader and writer'", CLAUDECODE="1")

    (session,) = ledger.sessions(commit_hash=head(repo), kind="checkpoint")
    assert session.agent_session_id == after.session_id

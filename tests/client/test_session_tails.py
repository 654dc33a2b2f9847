"""The conversation after the last commit of a session no hook ended reaches the server at the
next session's start, once (docs/design.md §7 "Delta"; `tails`). Real git repositories, the git
post-commit hook as installed, a live server."""

from __future__ import annotations

import os
import time

from tests.client.conftest import ClaudeSession, ClientEnv, expected_upload, head
from tests.client.test_git_hook import commit, install


def talk_after_the_commit(claude: ClaudeSession) -> bytes:
    """The assistant goes on after the commit, then the session ends with no hook firing; an hour
    passes before the next session starts."""
    before = claude.content()
    claude.prompt("now explain the config file")
    claude.builder.assistant_text("config.toml holds the retry settings.")
    claude.flush()
    an_hour_ago = time.time() - 3600
    os.utime(claude.path, (an_hour_ago, an_hour_ago))
    return claude.content()[len(before) :]


def start_session(env: ClientEnv, repo) -> None:
    newcomer = ClaudeSession(env, repo)
    newcomer.prompt("a new session")
    payload = {"session_id": newcomer.session_id, "transcript_path": str(newcomer.path), "cwd": str(repo)}
    env.hook("session-start", {**payload, "hook_event_name": "SessionStart", "source": "startup"})


def test_the_tail_after_the_last_commit_is_uploaded_once_at_the_next_session_start(
    ledger, repo, client_env, claude
) -> None:
    install(client_env, repo)  # the git hook only: no SessionEnd hook fires
    claude.prompt("add a config file; I will commit it myself")
    assert commit(client_env, repo, "config.toml").returncode == 0
    checkpoint = ledger.wait_for(lambda: ledger.sessions(commit_hash=head(repo), kind="checkpoint"))[0]
    tail = talk_after_the_commit(claude)

    start_session(client_env, repo)

    [end] = ledger.sessions(agent_session_id=claude.session_id, kind="end")
    assert ledger.raw(end) == expected_upload(tail) and end.commit_hash == head(repo)
    assert end.start_offset == checkpoint.end_offset and end.previous_id == checkpoint.pk
    start_session(client_env, repo)
    assert client_env.cli("sync").returncode == 0
    assert len(ledger.sessions(agent_session_id=claude.session_id)) == 2 and client_env.queue() == []


def test_a_session_its_end_hook_captured_is_not_uploaded_again(ledger, repo, client_env, claude) -> None:
    install(client_env, repo)
    claude.prompt("add a config file; I will commit it myself")
    assert commit(client_env, repo, "config.toml").returncode == 0
    tail = talk_after_the_commit(claude)
    claude.end()

    start_session(client_env, repo)

    [end] = ledger.sessions(agent_session_id=claude.session_id, kind="end")
    assert ledger.raw(end) == expected_upload(tail)
    assert len(ledger.sessions(agent_session_id=claude.session_id)) == 2

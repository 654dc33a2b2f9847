"""`init --git-hook`: the git post-commit hook that captures every agent's active sessions at each
commit, with real repositories and real `git commit` (docs/agents.md "The git post-commit hook")."""

from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path

from tests.client.conftest import ClientEnv, git, head

HOOK_MARK = "sessionledger post-commit hook"


def commit(env: ClientEnv, repo: Path, name: str, **extra: str | None):
    (repo / name).write_text(f"{name}\n")
    git(repo, "add", "-A", env=env.env(**extra))
    import subprocess

    return subprocess.run(
        ["git", "commit", "-m", f"Add {name}"], cwd=repo, env=env.env(**extra), capture_output=True, text=True
    )


def install(env: ClientEnv, repo: Path, *args: str):
    result = env.cli("init", "--git-hook", "--project", "acme-api", *args, cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def write_hook(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def test_installs_once_chains_the_existing_hook_and_removes_cleanly(ledger, repo, client_env) -> None:
    hooks = repo / ".git" / "hooks"
    theirs = hooks / "post-commit"
    write_hook(theirs, f'echo "their hook ran with $#" >> "{repo}/../chained.log"\nexit 3')
    original = theirs.read_bytes()

    first = install(client_env, repo)
    assert "Installed the git post-commit hook" in first.stdout and "runs first" in first.stdout
    assert HOOK_MARK in theirs.read_text() and (hooks / "post-commit.sessionledger-chained").read_bytes() == original
    again = install(client_env, repo)
    assert "Already installed" in again.stdout and len(list(hooks.glob("post-commit*"))) == 2

    done = commit(client_env, repo, "a.txt")
    assert done.returncode == 0, done.stderr  # their exit 3 does not fail the commit or stop ours
    assert (repo.parent / "chained.log").read_text() == "their hook ran with 0\n"
    assert "sessionledger" not in done.stdout + done.stderr  # no output on the happy path

    removed = client_env.cli("init", "--git-hook", "--remove", cwd=repo)
    assert "put back the hook it chained" in removed.stdout
    assert theirs.read_bytes() == original and not (hooks / "post-commit.sessionledger-chained").exists()
    assert "nothing to remove" in client_env.cli("init", "--git-hook", "--remove", cwd=repo).stdout


def test_follows_core_hooks_path_relative_to_the_working_tree(ledger, repo, client_env) -> None:
    git(repo, "config", "core.hooksPath", ".githooks")
    assert "Git hook: not installed" in client_env.cli("status", cwd=repo).stdout
    install(client_env, repo)
    assert HOOK_MARK in (repo / ".githooks" / "post-commit").read_text()
    checked = client_env.cli("status", "--check", cwd=repo)  # the git hook alone is a way to capture
    assert checked.returncode == 0 and f"Git hook: {repo / '.githooks' / 'post-commit'}" in checked.stdout
    assert not (repo / ".git" / "hooks" / "post-commit").exists()
    client_env.cli("init", "--git-hook", "--remove", cwd=repo)
    assert not (repo / ".githooks" / "post-commit").exists()


def test_status_check_fails_when_the_git_hook_calls_a_client_that_is_gone(ledger, repo, client_env, tmp_path) -> None:
    """The git hook alone counts only if the client it calls runs: a deleted venv captures nothing."""
    install(client_env, repo)
    hook = repo / ".git" / "hooks" / "post-commit"
    bare = "/usr/local/bin:/usr/bin:/bin"  # no `sessionledger` on PATH for the fallback either
    works = client_env.cli("status", "--check", cwd=repo, PATH=bare)
    assert works.returncode == 0 and "reaches sessionledger 0.1.0" in works.stdout, works.stdout + works.stderr

    venv = tmp_path / "old-venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").write_text("#!/bin/sh\nexit 1\n")  # there, executable, and no client behind it
    (venv / "python").chmod(0o755)
    text = hook.read_text()
    for replacement in ("/opt/gone/bin/python", str(venv / "python")):
        hook.write_text(text.replace(sys.executable, replacement))
        broken = client_env.cli("status", "--check", cwd=repo, PATH=bare)
        assert broken.returncode == 1, broken.stdout
        assert "post-commit) does not work: the client it calls is gone or does not run" in broken.stdout
        assert "Capture would not work: no hook reaches a client" in broken.stderr


def test_a_commit_made_by_hand_during_a_claude_session_is_captured(ledger, repo, client_env, claude) -> None:
    install(client_env, repo)
    claude.prompt("add a config file; I will commit it myself")
    claude.builder.assistant_text("Done: config.toml is ready for you to commit.")
    claude.flush()

    done = commit(client_env, repo, "config.toml")
    assert done.returncode == 0 and done.stdout.count("\n") <= 3  # git's own summary only

    session = ledger.wait_for(lambda: ledger.sessions(commit_hash=head(repo), kind="checkpoint"))[0]
    assert session.agent == "claude-code" and session.agent_session_id == claude.session_id
    assert ledger.raw(session) == claude.content()  # nothing in it to slim or redact
    assert done.returncode == 0


def test_two_active_conversations_lose_nothing_to_one_commit(ledger, repo, client_env, claude) -> None:
    """The server keeps one checkpoint per commit: the conversation written last gets it, and the
    other keeps its lines for its own next commit instead of losing them to a refused duplicate."""
    from tests.client.conftest import ClaudeSession

    install(client_env, repo)
    claude.prompt("write the parser")
    other = ClaudeSession(client_env, repo).prompt("write the renderer")
    os.utime(claude.path, (time.time() - 60, time.time() - 60))

    assert commit(client_env, repo, "renderer.py").returncode == 0
    [first] = ledger.wait_for(lambda: ledger.sessions(commit_hash=head(repo), kind="checkpoint"))
    assert first.agent_session_id == other.session_id

    claude.prompt("the parser is ready to commit")
    assert commit(client_env, repo, "parser.py").returncode == 0
    [second] = ledger.wait_for(lambda: ledger.sessions(commit_hash=head(repo), kind="checkpoint"))
    assert second.agent_session_id == claude.session_id
    assert ledger.raw(second) == claude.content()  # from its first line: nothing was lost


def test_a_commit_inside_claudes_bash_is_left_to_its_own_hook(ledger, repo, client_env, claude) -> None:
    """With Claude Code's hooks installed, PostToolUse captures the commit with the call's result."""
    assert client_env.cli("init", "--project", "acme-api", cwd=repo).returncode == 0
    install(client_env, repo)
    claude.prompt("commit the file")
    (repo / "b.py").write_text("B = 1\n")
    claude.bash("git add -A && git commit -q -m 'Add b'", CLAUDECODE="1")

    [session] = ledger.sessions(commit_hash=head(repo), kind="checkpoint")
    assert b'"tool_result"' in ledger.raw(session).splitlines()[-1]  # cut after the result, by PostToolUse


def test_sessions_of_other_trees_or_idle_for_hours_are_not_captured(ledger, repo, client_env, claude, tmp_path) -> None:
    install(client_env, repo)
    claude.prompt("an old conversation")
    hours_ago = time.time() - 3 * 3600
    os.utime(claude.path, (hours_ago, hours_ago))
    other = tmp_path / "other"
    other.mkdir()
    from tests.client.conftest import ClaudeSession

    ClaudeSession(client_env, other).prompt("a conversation about another repository")

    assert commit(client_env, repo, "c.txt").returncode == 0
    assert ledger.sessions(commit_hash=head(repo)) == []
    assert "failed" not in client_env.log()


def test_never_fails_a_commit_even_when_the_client_is_gone(ledger, repo, client_env, tmp_path) -> None:
    install(client_env, repo)
    hook = repo / ".git" / "hooks" / "post-commit"
    hook.write_text(hook.read_text().replace(" hook post-commit", " no-such-command"))
    done = commit(client_env, repo, "d.txt", PATH="/usr/bin:/bin")
    assert done.returncode == 0 and "sessionledger" not in done.stderr


def test_the_post_commit_no_op_path_imports_almost_nothing(client_env, repo) -> None:
    """No active session: each agent's layout module lists its folders; no adapter, nothing heavy
    is imported."""
    import subprocess
    import sys

    from tests.client.test_hook_contract import NOOP_FORBIDDEN

    probe = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "from sessionledger.cli import main\n"
        "main(['hook', 'post-commit'])\n"
        "print(' '.join(sorted(set(sys.modules) - before)))\n"
    )
    (client_env.home / ".codex" / "sessions").mkdir(parents=True)
    (client_env.home / ".claude" / "projects").mkdir(parents=True)
    result = subprocess.run([sys.executable, "-c", probe], cwd=repo, env=client_env.env(), capture_output=True)
    loaded = set(result.stdout.decode().split())
    assert {"sessionledger.hooks.post_commit", "sessionledger.core.codex_layout"} <= loaded
    adapters = {"sessionledger.agents", "sessionledger.agents.base", "sessionledger.agents.codex"}
    assert loaded & (NOOP_FORBIDDEN | adapters | {"typing", "json", "re", "dataclasses", "pathlib"}) == set()

"""A teammate's transcript names the directory its conversation ran in. `fork --exec` starts the
agent there and `restore` resumes there: resolved (`..`, symlinks), that directory must lie inside
the worktree or repository the command works on, or the command refuses and starts nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.client.conftest import ClaudeSession, ClientEnv, git, head

pytestmark = pytest.mark.django_db(transaction=True)


def captured(claude: ClaudeSession, repo: Path, recorded_cwd: str) -> str:
    """A conversation whose transcript says it ran in `recorded_cwd`, with one commit; uploaded."""
    claude.builder.cwd = recorded_cwd
    claude.prompt("Add the module")
    (repo / "a.py").write_text("A = 1\n")
    claude.bash("git add -A && git commit -q -m 'Add a'")
    claude.prompt("Explain it")
    claude.end()
    return head(repo)


def fake_claude(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A `claude` on PATH that writes where it was started."""
    bin_dir, ran = tmp_path / "bin", tmp_path / "claude-ran"
    bin_dir.mkdir()
    fake = bin_dir / "claude"
    fake.write_text(f'#!/bin/sh\necho "$PWD" > {ran}\n')
    fake.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}, ran


@pytest.fixture
def secret_dir(tmp_path: Path) -> Path:
    """A directory outside the repository, like `~/.ssh`."""
    secret = tmp_path / "home" / ".ssh"
    secret.mkdir(parents=True)
    (secret / "id_ed25519").write_text("private\n")
    return secret


def fork_exec(client_env: ClientEnv, repo: Path, tmp_path: Path, session_id: str):
    env, ran = fake_claude(tmp_path)
    worktree = tmp_path / "fork"
    result = client_env.cli("fork", session_id, "--worktree", str(worktree), "--exec", cwd=repo, **env)
    return result, ran, worktree


def test_fork_refuses_a_transcript_cwd_outside_the_repository(
    ledger, repo, claude, client_env, tmp_path, secret_dir
) -> None:
    hostile = f"{repo}/../home/.ssh"  # under the repository's root by its prefix, in ~/.ssh once resolved
    captured(claude, repo, hostile)

    result, ran, worktree = fork_exec(client_env, repo, tmp_path, claude.session_id)

    assert result.returncode == 1, result.stdout
    assert "the transcript's directory" in result.stderr and "outside" in result.stderr
    assert not ran.exists()  # the agent never started
    assert not worktree.exists() and "fork/" not in git(repo, "branch", "--list")  # nothing left behind


def test_fork_refuses_a_transcript_cwd_that_escapes_through_a_committed_symlink(
    ledger, repo, claude, client_env, tmp_path, secret_dir
) -> None:
    (repo / "docs").symlink_to(secret_dir)  # committed: the fork's worktree checks it out too
    captured(claude, repo, f"{repo}/docs")

    result, ran, worktree = fork_exec(client_env, repo, tmp_path, claude.session_id)

    assert result.returncode == 1 and str(secret_dir) in result.stderr
    assert not ran.exists() and not worktree.exists()


def test_fork_exec_still_starts_in_a_subdirectory_the_transcript_names(
    ledger, repo, claude, client_env, tmp_path
) -> None:
    (repo / "app").mkdir()
    (repo / "app" / "keep.py").write_text("")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Add app")
    captured(claude, repo, f"{repo}/app")

    result, ran, worktree = fork_exec(client_env, repo, tmp_path, claude.session_id)

    assert result.returncode == 0, result.stderr
    assert ran.read_text().strip() == str(worktree / "app")


def test_restore_refuses_to_resume_in_a_directory_outside_the_repository(
    ledger, repo, claude, client_env, secret_dir
) -> None:
    captured(claude, repo, str(secret_dir))
    claude.path.unlink()

    refused = client_env.cli("restore", claude.session_id, cwd=repo)
    chosen = client_env.cli("restore", claude.session_id, "--cwd", str(repo), cwd=repo)

    assert refused.returncode == 1 and "outside" in refused.stderr and "--cwd" in refused.stderr
    assert "Resume it" not in refused.stdout
    assert chosen.returncode == 0, chosen.stderr
    assert f"cd {repo} && claude -r" in chosen.stdout


def test_restore_refuses_a_transcript_cwd_that_escapes_through_a_symlink(
    ledger, repo, claude, client_env, secret_dir
) -> None:
    (repo / "docs").symlink_to(secret_dir)
    captured(claude, repo, f"{repo}/docs")
    claude.path.unlink()

    refused = client_env.cli("restore", claude.session_id, cwd=repo)

    assert refused.returncode == 1 and str(secret_dir) in refused.stderr

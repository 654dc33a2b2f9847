"""`rewind`: the working tree's files back to a checkpoint, HEAD unmoved (git only, no server)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tests.client.conftest import ClientEnv, git, head

BINARY = bytes(range(256)) * 4


def history(repo: Path, env: ClientEnv) -> str:
    """A checkpoint with text, binary and executable files; then a commit that changes all of it."""
    (repo / "text.txt").write_bytes(b"one\ntwo\nthree\n")
    (repo / "blob.bin").write_bytes(BINARY)
    (repo / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "crlf.txt").write_bytes(b"a\r\nb\r\n")
    git(repo, "add", "-A", env=env.env())
    git(repo, "commit", "-q", "-m", "Checkpoint", env=env.env())
    checkpoint = head(repo)
    (repo / "text.txt").write_bytes(b"one\n2\nthree\nfour\n")
    (repo / "blob.bin").unlink()
    (repo / "run.sh").chmod(0o644)
    (repo / "new").mkdir()
    (repo / "new" / "added.py").write_text("x = 1\ny = 2\n")
    git(repo, "add", "-A", env=env.env())
    git(repo, "commit", "-q", "-m", "Later", env=env.env())
    return checkpoint


def tree_bytes(repo: Path) -> dict[str, tuple[bytes, bool]]:
    files = {}
    for path in sorted(repo.rglob("*")):
        if ".git" in path.relative_to(repo).parts or not path.is_file():
            continue
        files[str(path.relative_to(repo))] = (path.read_bytes(), bool(path.stat().st_mode & stat.S_IXUSR))
    return files


def test_dry_run_reports_files_insertions_and_deletions_without_touching_anything(repo, client_env) -> None:
    checkpoint = history(repo, client_env)
    before, later = tree_bytes(repo), head(repo)
    mtimes = {p: os.stat(repo / p).st_mtime_ns for p in before}

    result = client_env.cli("rewind", checkpoint[:10], "--dry-run", cwd=repo)

    assert result.returncode == 0, result.stderr
    assert "would change" in result.stdout
    assert "add     blob.bin  (binary)" in result.stdout
    assert "delete  new/added.py  (+0 -2)" in result.stdout
    assert "modify  text.txt  (+1 -2)" in result.stdout
    assert "4 files would be changed, 1 insertion(+), 4 deletions(-)" in result.stdout
    assert tree_bytes(repo) == before and {p: os.stat(repo / p).st_mtime_ns for p in before} == mtimes
    assert head(repo) == later and git(repo, "status", "--porcelain") == ""


def test_dry_run_says_the_real_rewind_would_refuse_uncommitted_changes_and_exits_1(repo, client_env) -> None:
    checkpoint = history(repo, client_env)
    (repo / "text.txt").write_text("local edit\n")

    dry = client_env.cli("rewind", checkpoint, "--dry-run", cwd=repo)
    forced = client_env.cli("rewind", checkpoint, "--dry-run", "--force", cwd=repo)

    assert dry.returncode == 1 and "would change" in dry.stdout
    assert "The rewind itself would refuse: 1 uncommitted change(s) would be lost" in dry.stderr
    assert forced.returncode == 0 and "refuse" not in forced.stderr
    assert (repo / "text.txt").read_text() == "local edit\n"


def test_rewind_restores_the_checkpoints_bytes_exactly_and_leaves_head_alone(repo, client_env, tmp_path) -> None:
    checkpoint = history(repo, client_env)
    later = head(repo)
    expected_dir = tmp_path / "expected"
    git(repo, "worktree", "add", "-q", "--detach", str(expected_dir), checkpoint, env=client_env.env())
    expected = tree_bytes(expected_dir)

    result = client_env.cli("rewind", checkpoint, cwd=repo / "new")

    assert result.returncode == 0, result.stderr
    assert "Rewound the working tree to" in result.stdout and "4 files changed" in result.stdout
    assert tree_bytes(repo) == expected
    assert head(repo) == later and git(repo, "diff", "--staged", "--stat", checkpoint) == ""
    assert client_env.cli("rewind", checkpoint, cwd=repo).stdout.startswith("The working tree already matches")


def test_rewind_refuses_uncommitted_changes_unless_forced(repo, client_env) -> None:
    checkpoint = history(repo, client_env)
    (repo / "text.txt").write_text("local edit\n")

    refused = client_env.cli("rewind", checkpoint, cwd=repo)
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.strip() == (
        "sessionledger: 1 uncommitted change(s) would be lost: commit or stash them first, or pass --force"
    )
    assert (repo / "text.txt").read_text() == "local edit\n"

    forced = client_env.cli("rewind", checkpoint, "--force", cwd=repo)
    assert forced.returncode == 0 and (repo / "text.txt").read_bytes() == b"one\ntwo\nthree\n"


def test_rewind_refuses_to_overwrite_an_untracked_file(repo, client_env) -> None:
    checkpoint = history(repo, client_env)
    (repo / "blob.bin").write_text("mine, untracked")
    refused = client_env.cli("rewind", checkpoint, cwd=repo)
    assert refused.returncode == 1 and "untracked file blob.bin would be overwritten" in refused.stderr
    assert (repo / "blob.bin").read_text() == "mine, untracked"


def test_rewind_fails_clearly_on_bad_input(repo, client_env, tmp_path) -> None:
    unknown = client_env.cli("rewind", "deadbeef", cwd=repo)
    assert unknown.returncode == 1 and unknown.stderr.strip() == "sessionledger: no commit deadbeef in this repository"
    outside = client_env.cli("rewind", "HEAD", cwd=tmp_path)
    assert outside.returncode == 1 and "not inside a git repository" in outside.stderr

"""The patch id the server computes from a forge's per-file diffs is ``git patch-id --stable``'s."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from integrations.patchid import FileDiff, patch_id


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def as_the_forge_gives_it(diff: str) -> list[FileDiff]:
    """``git show``'s diff cut the way GitHub's ``files`` and GitLab's ``diff`` entries are: paths, hunks."""
    files = []
    for chunk in re.split(r"(?m)^(?=diff --git )", diff):
        if not chunk:
            continue
        lines = chunk.splitlines()
        old = next(line[6:] if line != "--- /dev/null" else "" for line in lines if line.startswith("--- "))
        new = next(line[6:] if line != "+++ /dev/null" else "" for line in lines if line.startswith("+++ "))
        first_hunk = next(n for n, line in enumerate(lines) if line.startswith("@@"))
        files.append(FileDiff(old_path=old, new_path=new, patch="\n".join(lines[first_hunk:])))
    return files


def test_a_commit_that_modifies_adds_and_deletes_files_has_gits_stable_patch_id(tmp_path) -> None:
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "dev@example.com")
    git(tmp_path, "config", "user.name", "Dev")
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (tmp_path / "old.txt").write_text("bye\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "one")
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return b  +  a\n\ndef mul(a, b):\n    return a * b")
    (tmp_path / "new.py").write_text("print('hi')\n")
    (tmp_path / "old.txt").unlink()
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "two")

    expected = subprocess.run(
        ["git", "patch-id", "--stable"], input=git(tmp_path, "show", "HEAD"), capture_output=True, text=True
    ).stdout.split()[0]
    files = as_the_forge_gives_it(git(tmp_path, "show", "--format=", "HEAD"))
    assert len(files) == 3
    assert patch_id(files) == expected
    assert patch_id(files[::-1]) == expected  # --stable: the files' order does not matter


def test_a_commit_without_text_changes_has_no_patch_id_to_match() -> None:
    assert patch_id([]) == ""
    assert patch_id([FileDiff(old_path="logo.png", new_path="logo.png", patch="")]) == ""

"""A fork at a step between two commits has the files the conversation had written at that step
(docs/client.md "Steps"): the worktree starts at the earlier commit and the conversation's own
writes since it are replayed; what cannot be reproduced is said, and nothing lands outside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.client.attribution_helpers import agent_edit, agent_write
from tests.client.conftest import ClaudeSession, git, head
from tests.client.test_steps import fork

pytestmark = pytest.mark.django_db(transaction=True)


def tool_step(claude: ClaudeSession, name: str, tool_input: dict, result: str = "ok") -> str:
    """A tool call recorded without running anything (no hook: it commits nothing); its step id."""
    b = claude.builder
    b.new_response().tool_use(name, tool_input)
    step, tool_id = b.last_uuid, b.last_tool_id
    b.tool_result(tool_id, result, parent=step, source_uuid=step)
    claude.flush()
    return step


def between_two_commits(claude: ClaudeSession, repo: Path, outside: Path) -> tuple[str, str, dict[str, str]]:
    """Commit 1; then five files written and one edited, a shell write, an edit the shell's change
    invalidates, a write aimed outside the repository; the step; more work; commit 2."""
    claude.prompt("add the app module and commit it")
    agent_write(claude, repo, "app.py", "def main():\n    return 0\n")
    claude.bash("git add -A && git commit -q -m 'Add app'")
    first = head(repo)
    claude.prompt("now the five helpers, and wire them in")
    expected = {}
    (repo / "helpers").mkdir()
    for name in ("one", "two", "three", "four", "five"):
        text = f"def {name}():\n    return '{name}'\n"
        agent_write(claude, repo, f"helpers/{name}.py", text)
        expected[f"helpers/{name}.py"] = text
    agent_edit(claude, repo, "app.py", "    return 0\n", "    from helpers.one import one\n    return one()\n")
    expected["app.py"] = (repo / "app.py").read_text()
    claude.bash("echo 'generated' > build.txt && sed -i 's/five/FIVE/' helpers/five.py")
    agent_edit(claude, repo, "helpers/five.py", "return 'FIVE'", "return 'five!'")
    tool_step(claude, "Write", {"file_path": str(outside), "content": "escaped\n"})
    step = tool_step(claude, "Bash", {"command": "ls helpers"}, "one.py two.py")
    agent_write(claude, repo, "later.py", "LATER = 1\n")
    claude.bash("git add -A && git commit -q -m 'Add helpers'")
    claude.end()
    return first, step, expected


def test_a_fork_between_two_commits_has_the_files_written_at_that_step(
    ledger, repo, claude, client_env, tmp_path
) -> None:
    outside = tmp_path / "outside.txt"
    first, step, expected = between_two_commits(claude, repo, outside)

    result, worktree = fork(client_env, repo, tmp_path, "forked", claude.session_id, "--at", step[:8])

    assert git(worktree, "rev-parse", "HEAD") == first
    for name, text in expected.items():
        assert (worktree / name).read_text() == text, name
    assert not (worktree / "later.py").exists() and not (worktree / "build.txt").exists()
    assert not outside.exists()
    assert "replayed  6 file(s)" in result.stdout  # the five helpers and app.py
    reported = [line for line in result.stdout.splitlines() if line.startswith("  not reproduced")]
    assert any("echo 'generated' > build.txt" in line for line in reported), result.stdout
    assert any("helpers/five.py: old_string not found" in line for line in reported), result.stdout
    assert any("outside" in line and "refused" in line for line in reported), result.stdout


def test_a_fork_at_the_commit_itself_replays_nothing(ledger, repo, claude, client_env, tmp_path) -> None:
    first, _, _ = between_two_commits(claude, repo, tmp_path / "outside.txt")

    result, worktree = fork(client_env, repo, tmp_path, "at-commit", claude.session_id, "--at", first[:10])

    assert git(worktree, "rev-parse", "HEAD") == first and "replayed" not in result.stdout
    assert not (worktree / "helpers").exists()


def test_codex_apply_patch_and_notebook_edits_are_replayed_and_checked(tmp_path) -> None:
    from sessionledger.commands.replay import replay
    from sessionledger.core.formats.toolmap import patch_input

    tree = tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "old.py").write_text("x = 1\ny = 2\n")
    (tree / "gone.py").write_text("bye\n")
    notebook = {"cells": [{"cell_type": "code", "id": "c1", "source": ["a = 1"], "metadata": {}, "outputs": []}]}
    (tree / "nb.ipynb").write_text(json.dumps(notebook))
    patch = (
        "*** Begin Patch\n*** Add File: src/new.py\n+NEW = True\n"
        "*** Update File: src/old.py\n@@\n x = 1\n-y = 2\n+y = 3\n"
        "*** Delete File: gone.py\n"
        "*** Update File: src/old.py\n@@\n-not there\n+never\n*** End Patch"
    )
    calls = [
        ("Edit", patch_input(patch, {"input": patch})),
        ("NotebookEdit", {"notebook_path": "/recorded/nb.ipynb", "cell_id": "c1", "new_source": "a = 2\nb = 3"}),
    ]
    messages = [{"kind": "tool_use", "tool": {"id": str(i), "name": n, "input": a}} for i, (n, a) in enumerate(calls)]

    done = replay(messages, worktree=str(tree), cwd_from="/recorded", cwd=str(tree))

    assert (tree / "src" / "new.py").read_text() == "NEW = True\n"
    assert (tree / "src" / "old.py").read_text() == "x = 1\ny = 3\n"
    assert not (tree / "gone.py").exists()
    assert json.loads((tree / "nb.ipynb").read_text())["cells"][0]["source"] == ["a = 2\n", "b = 3"]
    assert done.not_reproduced == [
        "apply_patch src/old.py: old_string not found: the file differs from what the conversation edited"
    ]


def edit_with_result(claude: ClaudeSession, repo: Path, name: str, old: str, new: str) -> str:
    """An Edit as Claude Code records it: the result carries the file's text before the edit."""
    before = (repo / name).read_text()
    (repo / name).write_text(before.replace(old, new, 1))
    b = claude.builder
    b.new_response().tool_use("Edit", {"file_path": str(repo / name), "old_string": old, "new_string": new})
    step, tool_id = b.last_uuid, b.last_tool_id
    result = {"filePath": str(repo / name), "oldString": old, "newString": new, "originalFile": before}
    b.tool_result(tool_id, "The file has been updated.", tool_use_result=result, parent=step, source_uuid=step)
    claude.flush()
    return step


def edit_ignored_file_between_commits(claude: ClaudeSession, repo: Path, config: str) -> tuple[str, str]:
    """Commit 1; an Edit of the gitignored `local.cfg` (level 1 -> 2); the step; commit 2."""
    (repo / ".gitignore").write_text("local.cfg\n")
    (repo / "local.cfg").write_text(config)
    claude.prompt("add the app and commit it")
    agent_write(claude, repo, "app.py", "A = 1\n")
    claude.bash("git add -A && git commit -q -m 'Add app'")
    first = head(repo)
    claude.prompt("raise the level in the local config")
    edit_with_result(claude, repo, "local.cfg", "level = 1", "level = 2")
    step = tool_step(claude, "Bash", {"command": "cat local.cfg"}, "mode = dev\nlevel = 2\n")
    agent_write(claude, repo, "later.py", "LATER = 1\n")
    claude.bash("git add -A && git commit -q -m 'Add later'")
    claude.end()
    return first, step


def test_a_fork_restores_a_gitignored_file_the_conversation_edited_from_the_transcript(
    ledger, repo, claude, client_env, tmp_path
) -> None:
    first, step = edit_ignored_file_between_commits(claude, repo, "mode = dev\nlevel = 1\n")

    result, worktree = fork(client_env, repo, tmp_path, "ignored", claude.session_id, "--at", step[:8])

    assert git(worktree, "rev-parse", "HEAD") == first
    assert (worktree / "local.cfg").read_text() == "mode = dev\nlevel = 2\n", result.stdout
    assert "restored  local.cfg" in result.stdout
    assert not (worktree / "later.py").exists()


def test_a_fork_does_not_restore_an_ignored_file_whose_transcript_copy_was_redacted(
    ledger, repo, claude, client_env, tmp_path
) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    _, step = edit_ignored_file_between_commits(claude, repo, f"token = {token}\nlevel = 1\n")

    result, worktree = fork(client_env, repo, tmp_path, "redacted", claude.session_id, "--at", step[:8])

    assert not (worktree / "local.cfg").exists()
    assert "local.cfg: not in the commit, and the transcript's copy of it is redacted" in result.stdout

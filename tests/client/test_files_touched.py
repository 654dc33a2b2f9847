"""`files_touched` is relative to the repository root, tool-call paths and task sessions too; a
file outside the repository is `<outside>/<name>`; no developer's directory layout reaches the
server (docs/client.md "files_touched")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.client.attribution_helpers import agent_call, agent_write
from tests.client.conftest import ClaudeSession, ClientEnv, head
from tests.client.transcript_builder import TranscriptBuilder

pytestmark = pytest.mark.django_db(transaction=True)


def no_absolute(paths: list[str]) -> bool:
    return not any(p.startswith(("/", "~")) or ":\\" in p for p in paths)


def test_a_checkpoint_lists_the_tool_calls_files_relative_to_the_repository(
    ledger, repo: Path, claude: ClaudeSession, tmp_path: Path
) -> None:
    (repo / "src").mkdir()
    claude.prompt("add the parser, note it down, and sketch a scratch file")
    agent_write(claude, repo, "src/parser.py", "def parse():\n    return 1\n")
    (tmp_path / "notes.md").write_text("todo\n")
    agent_call(claude, "Write", {"file_path": str(tmp_path / "notes.md"), "content": "todo\n"})
    agent_call(claude, "Edit", {"file_path": "scratch.py", "old_string": "a", "new_string": "b"})  # cwd-relative
    claude.bash("git add src && git commit -q -m 'Add the parser'")

    files = ledger.session_for(head(repo)).files_touched

    assert files == ["src/parser.py", "<outside>/notes.md", "scratch.py"]
    assert str(tmp_path) not in str(files)


def test_a_task_session_lists_repository_relative_files(ledger, repo, claude, client_env: ClientEnv, tmp_path) -> None:
    bin_dir = tmp_path / "bd-bin"
    bin_dir.mkdir()
    (bin_dir / "bd").write_text('#!/bin/sh\necho "✓ $1 $2: done"\n')
    (bin_dir / "bd").chmod(0o755)
    client_env.vars["PATH"] = f"{bin_dir}:{client_env.vars['PATH']}"
    claude.bash("bd update SL-7 --status in_progress")
    claude.prompt("write the reader")
    agent_write(claude, repo, "reader.py", "def read():\n    return 2\n")
    claude.bash("git add -A && git commit -q -m 'Add the reader'")
    claude.bash("bd close SL-7")

    [task] = ledger.sessions(kind="task")

    assert "reader.py" in task.files_touched and no_absolute(task.files_touched)


def test_the_server_keeps_no_absolute_path_an_older_client_sent(ingest, world) -> None:
    raw = (
        TranscriptBuilder()
        .prompt("fix the tokenizer")
        .tool_call("Edit", {"file_path": "/Users/dev/acme/src/tokenize.py", "old_string": "a", "new_string": "b"})
        .tool_call("Write", {"file_path": "/Users/dev/scratch/plan.md", "content": "x"})
        .turn_end()
        .build()
    )
    session = ingest(world.project, world.member, raw=raw, files_touched=["src/tokenize.py", "C:\\Users\\dev\\a.txt"])

    assert session.files_touched == ["src/tokenize.py", "<outside>/a.txt", "<outside>/plan.md"]

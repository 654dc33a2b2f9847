"""The hook's contract with Claude Code: exit 0 and silence whatever happens, and a fast path
that imports almost nothing when HEAD did not move."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sessionledger import beads, fastjson, transcripts
from tests.client.conftest import ClaudeSession, ClientEnv

NOOP_FORBIDDEN = {
    "json",
    "re",
    "argparse",
    "subprocess",
    "typing",
    "dataclasses",
    "fcntl",
    "sessionledger.state",
    "sessionledger.core.formats",
    "sessionledger.config",
}


def run_hook(env: ClientEnv, stdin: bytes, event: str = "post-tool-use", **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sessionledger", "hook", event],
        input=stdin,
        env=env.env(**extra),
        capture_output=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "stdin",
    [b"", b"not json", b"[1, 2]", b'{"tool_name": "Bash", "tool_input": "oops", "cwd": 3}', b"\xff\xfe"],
)
def test_the_hook_exits_0_and_prints_nothing_on_bad_input(client_env, stdin) -> None:
    result = run_hook(client_env, stdin)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


def test_an_internal_failure_is_logged_not_reported_to_the_agent(client_env, repo, claude, tmp_path) -> None:
    claude.prompt("commit")
    (repo / "a.py").write_text("a = 1\n")
    claude.bash("git add -A && git commit -q -m a", hook=False)
    blocker = tmp_path / "state-is-a-file"
    blocker.write_text("")
    payload = json.dumps(claude.payload("git commit", {}, repo)).encode()

    result = run_hook(client_env, payload, XDG_STATE_HOME=str(blocker))

    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


def test_unknown_events_and_other_tools_are_ignored(client_env, repo, claude) -> None:
    payload = claude.payload("ls", {}, repo)
    assert run_hook(client_env, json.dumps(payload).encode(), "pre-compact").returncode == 0
    write = {**payload, "tool_name": "Write", "tool_input": {"file_path": "/x", "content": ""}}
    assert run_hook(client_env, json.dumps(write).encode()).returncode == 0
    assert not client_env.state_dir.exists()


# what a commit capture never imports (bench/bench_hook.py measures what each import costs)
CAPTURE_FORBIDDEN = {
    *("typing", "json", "re", "collections", "dataclasses", "subprocess", "datetime", "zlib", "pathlib"),
    *("sessionledger.agents", "sessionledger.agents.base", "sessionledger.agents.claude_code"),
    *("sessionledger.agents.codex", "sessionledger.agents.gemini", "sessionledger.core.version"),
    "sessionledger.core.formats",
}


def imported_by_hook(
    env: dict[str, str], payload: dict, event: str = "post-tool-use", cwd: Path | None = None
) -> set[str]:
    """The modules one hook call imports (the git post-commit hook reads no payload)."""
    probe = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "from sessionledger.cli import main\n"
        f"main(['hook', {event!r}])\n"
        "print(' '.join(sorted(set(sys.modules) - before)))\n"
    )
    stdin = json.dumps(payload).encode()
    run = [sys.executable, "-c", probe]
    result = subprocess.run(run, input=stdin, env=env, cwd=cwd, capture_output=True, timeout=60)
    return set(result.stdout.decode().split())


def test_the_no_op_path_imports_almost_nothing(client_env: ClientEnv, repo, claude: ClaudeSession) -> None:
    claude.bash("ls")  # the first call observes HEAD
    loaded = imported_by_hook(client_env.env(), claude.payload("git status", {"stdout": ""}, repo))
    assert "sessionledger.hooks.post_tool_use" in loaded
    assert loaded & NOOP_FORBIDDEN == set()


def test_a_commit_capture_imports_only_what_capturing_needs(client_env: ClientEnv, repo, claude: ClaudeSession) -> None:
    """A Claude Code capture reads HEAD, writes the intent and the state, and detaches the
    uploader: no agent adapter (not even Claude Code's: `claude_layout` answers what a capture asks),
    no `typing`, `json`, `re` or `collections`, no `datetime` on the transcript's first capture
    (its first timestamp is read by hand), no `zlib`, not even the version (bench/bench_hook.py
    measures what each import costs)."""
    claude.bash("ls")  # the first call observes HEAD
    claude.prompt("add a")
    (repo / "a.py").write_text("a = 1\n")
    claude.bash("git add -A && git commit -q -m a", hook=False)
    detached = client_env.env(SESSIONLEDGER_UPLOAD_INLINE=None)  # the uploader detached, as installed
    loaded = imported_by_hook(detached, claude.payload("git commit -q -m a", {"stdout": ""}, repo))
    assert "sessionledger.spawn" in loaded  # it captured and started the uploader
    assert "sessionledger.transcripts" in loaded  # it found the delta, and the conversation's start
    assert loaded & CAPTURE_FORBIDDEN == set()


def test_a_post_commit_capture_imports_no_agent_adapter(client_env: ClientEnv, repo, claude: ClaudeSession) -> None:
    """The git post-commit hook finds a commit's active sessions through each agent's layout
    module (`core/<agent>_layout.py`: where its sessions are, `os` only), not through the adapters,
    and captures a Claude Code session with no more than the PostToolUse capture imports."""
    claude.bash("ls")  # the first call observes HEAD
    claude.prompt("add a")
    (repo / "a.py").write_text("a = 1\n")
    claude.bash("git add -A && git commit -q -m a", hook=False)  # the tool hook did not see it
    detached = client_env.env(SESSIONLEDGER_UPLOAD_INLINE=None)  # the uploader detached, as installed
    loaded = imported_by_hook(detached, {}, "post-commit", cwd=repo)
    assert "sessionledger.spawn" in loaded  # it captured and started the uploader
    assert {"sessionledger.core.codex_layout", "sessionledger.core.gemini_layout"} <= loaded  # it asked every agent
    assert loaded & CAPTURE_FORBIDDEN == set()
    queued = [p.read_text() for p in (client_env.state_dir / "queue").glob("*/intent.json")]
    assert len(queued) == 1 and str(claude.path) in queued[0]


def test_every_agent_has_a_layout_the_post_commit_hook_asks() -> None:
    """An agent added to `agents.AGENTS` without its layout module would never be captured by the
    git post-commit hook."""
    from sessionledger import agents
    from sessionledger.hooks.post_commit import LAYOUTS

    assert [layout.AGENT_NAME for layout in LAYOUTS] == list(agents.AGENTS)
    assert [layout.SHELL_MARKER for layout in LAYOUTS] == [a.shell_marker for a in agents.every()]


@pytest.mark.parametrize(
    "stamp",
    [
        "2026-01-31T12:34:56.789Z",  # Claude Code, Codex CLI
        "2024-02-29T23:59:59.999999Z",
        "2026-06-01T10:00:00+02:00",
        "2026-06-01T10:00:00.5-05:30",
        "2026-06-01 10:00:00Z",
        "2026-06-01T10:00:00,25Z",
        "2026-06-01T10:00:00.1234567Z",
        "1970-01-01T00:00:00Z",
        "2026-06-01T10:00:00",  # no offset: local time
        "2026-06-01",
        "2023-02-29T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "2026-06-01T24:00:00Z",
        "２０２６-06-01T10:00:00Z",  # other scripts' digits
        "2026-06-01T10:00:00+2:00",
        "garbage",
        "",
    ],
)
def test_transcript_times_read_as_datetime_reads_them(stamp: str) -> None:
    """The hook reads a conversation's first time by hand (no `datetime` import): the same epoch
    seconds `datetime.fromisoformat` gives, or None where it refuses."""
    from datetime import datetime

    try:
        expected: float | None = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        expected = None
    assert transcripts.iso_to_epoch(stamp) == (pytest.approx(expected) if expected is not None else None)


def test_fastjson_decodes_like_json() -> None:
    samples = ['{"a": [1, 2.5, -3e2, "x\\u00e9\\n", null, true, false], "b": {}}', "  [] ", '"s"', "0"]
    for text in samples:
        assert fastjson.loads(text) == json.loads(text)
    for bad in ["", "{", '{"a": 1} x', "[1,]"]:
        with pytest.raises(ValueError):
            fastjson.loads(bad)


@pytest.mark.parametrize(
    ("command", "closed", "started"),
    [
        ("bd close SL-42", ["SL-42"], []),
        ("bd close SL-1 SL-2 --reason 'all done' && git push", ["SL-1", "SL-2"], []),
        ("cd x; bd update bd-a3f8.1 --status in_progress", [], ["bd-a3f8.1"]),
        ("bd update SL-3 --status=in_progress && bd close SL-4 -r fixed", ["SL-4"], ["SL-3"]),
        ("bd show SL-5", [], []),
        ("echo 'bd close SL-6'", [], []),
        ("bd close", [], []),
    ],
)
def test_beads_commands_are_recognised(command, closed, started) -> None:
    assert beads.closed_ids(command) == closed
    assert beads.started_ids(command) == started


def test_a_failed_bd_close_is_not_a_task_completion() -> None:
    assert beads.succeeded({"stdout": "✓ Closed SL-1: done", "stderr": ""}, "SL-1")
    assert not beads.succeeded({"stdout": "", "stderr": "Error: issue SL-1 not found"}, "SL-1")
    assert not beads.succeeded({"stdout": "", "stderr": "", "interrupted": True}, "SL-1")

"""Context continuity (docs/design.md §6, §7): `sessionledger context`, the SessionStart hook's JSON answer,
/clear captured as kind `clear` with the uncommitted diff stat, and the settings that switch it."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from sessionledger.core.formats import parse_transcript
from tests.client.conftest import ClaudeSession, ClientEnv, expected_upload, git, head

pytestmark = pytest.mark.django_db(transaction=True)

SOURCES = ("startup", "resume", "clear", "compact", "fork")
INLINE_LIMIT = 10_000


@pytest.fixture
def history(world, ingest) -> dict:
    """Sessions of the world's project: one on the branch the repo will be on, one that touched a
    file the developer is editing, one unrelated."""
    return {
        "recent": ingest(
            world.project, world.admin, "update the changelog", feature_branch="main", files_touched=["CHANGES.md"]
        ),
        "files": ingest(
            world.project,
            world.admin,
            "make the parser stream its input",
            feature_branch="perf",
            files_touched=["src/parser.py"],
        ),
        "branch": ingest(
            world.project, world.member, "keep offsets per transcript, never block the hook", feature_branch="feat/ctx"
        ),
    }


def on_branch_editing_parser(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feat/ctx")
    (repo / "src").mkdir()
    (repo / "src" / "parser.py").write_text("def parse(): ...\n")


def start(
    env: ClientEnv, repo: Path, source: str, session_id: str = "0b8f3a52-6c1e-4d2a-9f00-5e1c2d3b4a59", **extra
) -> subprocess.CompletedProcess:
    """Run the SessionStart hook with the stdin Claude Code sends (docs/claude-code.md §2.2-2.3)."""
    payload = {
        "session_id": session_id,
        "transcript_path": str(env.home / ".claude" / "projects" / "x" / f"{session_id}.jsonl"),
        "cwd": str(repo),
        "hook_event_name": "SessionStart",
        "source": source,
    }
    if source != "clear":
        payload["model"] = "claude-sonnet-4-5"  # absent after /clear (docs/claude-code.md §2.3)
    return env.hook("session-start", payload, **extra)


def answer(result: subprocess.CompletedProcess) -> dict:
    """The hook's stdout as Claude Code parses it: one JSON object of the documented shape."""
    data = json.loads(result.stdout)
    assert set(data) <= {"hookSpecificOutput", "systemMessage"}
    specific = data["hookSpecificOutput"]
    assert specific["hookEventName"] == "SessionStart"
    assert isinstance(specific["additionalContext"], str)
    assert len(specific["additionalContext"]) <= INLINE_LIMIT
    return data


def context_of(result: subprocess.CompletedProcess) -> str:
    return answer(result)["hookSpecificOutput"]["additionalContext"]


def write_config(env: ClientEnv, **values) -> None:
    env.config_dir.mkdir(parents=True, exist_ok=True)
    (env.config_dir / "config.json").write_text(json.dumps(values))


# --- sessionledger context ---------------------------------------------------------------------


def test_context_prints_the_server_digest_for_the_current_branch_and_files(ledger, history, repo, client_env) -> None:
    on_branch_editing_parser(repo)

    printed = client_env.cli("context", cwd=repo)
    as_json = client_env.cli("context", "--json", cwd=repo)

    assert printed.returncode == 0, printed.stderr
    digest = json.loads(as_json.stdout)
    assert [s["reason"] for s in digest["sessions"]] == ["same branch", "same files", "recent"]
    assert [s["id"] for s in digest["sessions"]] == [str(history[k].pk) for k in ("branch", "files", "recent")]
    assert printed.stdout == digest["text"].rstrip("\n") + "\n"
    text = printed.stdout
    assert "(branch feat/ctx)" in text
    assert text.index("never block the hook") < text.index("stream its input") < text.index("changelog")
    assert "\n- " not in text  # the short digest: no prompts unless asked for
    with_prompts = client_env.cli("context", "--prompts", cwd=repo).stdout
    assert "\n- keep offsets per transcript, never block the hook" in with_prompts


def test_context_respects_the_budget_and_explicit_branch_and_files(ledger, history, repo, client_env) -> None:
    args = ("context", "--json", "--prompts", "--branch", "perf", "--files", "CHANGES.md")
    small = json.loads(client_env.cli(*args, "--budget", "700", cwd=repo).stdout)
    large = json.loads(client_env.cli(*args, "--budget", "20000", cwd=repo).stdout)

    assert small["budget"] == 700 and len(small["text"]) <= 700
    assert 1 <= len(small["sessions"]) < len(large["sessions"]) == 3
    assert [(s["id"], s["reason"]) for s in large["sessions"][:2]] == [
        (str(history["files"].pk), "same branch"),
        (str(history["recent"].pk), "same files"),
    ]


# --- SessionStart: the hook's I/O contract --------------------------------------------------------


@pytest.mark.parametrize("source", SOURCES)
def test_session_start_prints_the_digest_as_additional_context(ledger, history, repo, client_env, source) -> None:
    on_branch_editing_parser(repo)

    result = start(client_env, repo, source)

    assert result.returncode == 0 and result.stderr == b""
    text = context_of(result)
    assert text.startswith("Sessionledger: earlier work in acme-api (branch feat/ctx)")
    assert text.index("Title: keep offsets per transcript") < text.index("Title: make the parser stream its input")


def test_the_digest_stays_inline_however_large_the_budget(ledger, world, ingest, repo, client_env) -> None:
    for n in range(24):
        ingest(
            world.project, world.member, f"decision {n}: " + "keep it simple and explicit " * 14, feature_branch="main"
        )
    write_config(client_env, context_budget=50_000, context_prompts=True)

    text = context_of(start(client_env, repo, "startup"))

    assert 8_000 < len(text) <= INLINE_LIMIT


def test_with_auto_resume_off_nothing_is_printed(ledger, history, repo, client_env) -> None:
    write_config(client_env, auto_resume_on_start=False)

    for source in ("startup", "resume"):
        result = start(client_env, repo, source)
        assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


def test_environment_overrides_beat_the_config_file(ledger, history, repo, client_env) -> None:
    write_config(client_env, auto_resume_on_start=False, context_budget=700, context_prompts=True)

    result = start(client_env, repo, "startup", SESSIONLEDGER_AUTO_RESUME_ON_START="1")
    wider = start(
        client_env, repo, "startup", SESSIONLEDGER_AUTO_RESUME_ON_START="1", SESSIONLEDGER_CONTEXT_BUDGET="5000"
    )

    assert len(context_of(result)) <= 700
    assert len(context_of(wider)) > 700


def test_session_start_says_nothing_when_there_is_no_history(ledger, repo, client_env) -> None:
    result = start(client_env, repo, "startup")
    assert (result.returncode, result.stdout) == (0, b"")


def test_session_start_never_fails_without_a_server(client_env, repo, dead_server) -> None:
    unconfigured = start(client_env, repo, "startup")
    down = start(client_env, repo, "resume", SESSIONLEDGER_SERVER=dead_server, SESSIONLEDGER_TOKEN="sl_x")

    for result in (unconfigured, down):
        assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert "no context digest" in client_env.log()


def test_a_server_that_does_not_answer_only_costs_the_timeout(client_env, repo) -> None:
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        result = start(
            client_env,
            repo,
            "startup",
            SESSIONLEDGER_SERVER=url,
            SESSIONLEDGER_TOKEN="sl_x",
            SESSIONLEDGER_PROJECT="acme-api",
            SESSIONLEDGER_CONTEXT_TIMEOUT="0.5",
        )

    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert "timed out" in client_env.log()


@pytest.mark.parametrize("stdin", [b"", b"not json", b"[]", b'{"source": 3, "cwd": 4}'])
def test_session_start_survives_bad_input(client_env, stdin) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "sessionledger", "hook", "session-start"],
        input=stdin,
        env=client_env.env(),
        capture_output=True,
        timeout=60,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


# --- /clear -----------------------------------------------------------------------------------


def work_then_clear_setup(repo: Path, claude: ClaudeSession) -> int:
    """A commit, then more conversation and uncommitted edits: +5 −1 over 2 files."""
    claude.prompt("add the reader")
    (repo / "reader.py").write_text("one\ntwo\nthree\n")
    claude.bash("git add -A && git commit -q -m 'Add reader'")
    committed = len(claude.content())
    claude.prompt("now rework it, and we will continue after a /clear")
    (repo / "reader.py").write_text("one\nTWO\nthree\nfour\n")  # +2 −1
    (repo / "notes.txt").write_text("a\nb\nc\n")  # untracked: +3
    return committed


CLEAR_SENTENCE = re.compile(
    r"^Sessionledger: before /clear, captured (\d+) messages (as (\S+)|\(queued[^)]*\)); uncommitted: (.+?)\.$", re.M
)


def test_clear_captures_the_segment_with_the_uncommitted_diff_stat(ledger, repo, claude, client_env) -> None:
    committed = work_then_clear_setup(repo, claude)

    ended = claude.end("clear")
    started = start(client_env, repo, "clear")

    assert ended.stdout == b""
    (cleared,) = ledger.sessions(kind="clear")
    assert cleared.commit_hash == head(repo) and cleared.feature_branch == "main"
    assert (cleared.start_offset, cleared.end_offset) == (committed, len(claude.content()))
    assert cleared.diff_stat == {"files": 2, "insertions": 5, "deletions": 1}
    assert sorted(cleared.files_touched) == ["notes.txt", "reader.py"]
    raw = ledger.raw(cleared)
    assert raw == expected_upload(claude.content()[committed:])
    match = CLEAR_SENTENCE.search(context_of(started))
    assert match, context_of(started)
    assert int(match[1]) == parse_transcript(raw).message_count
    assert match[3].endswith(f"/p/{ledger.slug}/s/{cleared.pk}")  # the server's web_url
    assert match[4] == "2 files +5 −1"
    assert not ledger.sessions(kind="end")


def test_clear_with_a_detached_uploader_reports_the_capture(ledger, repo, claude, client_env) -> None:
    work_then_clear_setup(repo, claude)

    claude.end("clear", SESSIONLEDGER_UPLOAD_INLINE=None)
    started = start(client_env, repo, "clear", SESSIONLEDGER_UPLOAD_INLINE=None)

    match = CLEAR_SENTENCE.search(context_of(started))
    assert match and match[4] == "2 files +5 −1", context_of(started)
    cleared = ledger.wait_for(lambda: ledger.sessions(kind="clear"))[0]
    assert cleared.diff_stat == {"files": 2, "insertions": 5, "deletions": 1}


def test_clear_while_offline_says_the_segment_is_queued(ledger, repo, claude, client_env, dead_server) -> None:
    work_then_clear_setup(repo, claude)

    claude.end("clear", SESSIONLEDGER_SERVER=dead_server)
    text = context_of(start(client_env, repo, "clear", SESSIONLEDGER_SERVER=dead_server))

    match = CLEAR_SENTENCE.search(text)
    assert match and match[2].startswith("(queued: upload pending") and match[4] == "2 files +5 −1", text
    assert len(client_env.queue()) == 1 and not ledger.sessions(kind="clear")


def test_clear_with_nothing_new_captures_nothing_and_says_so(ledger, repo, claude, client_env) -> None:
    claude.prompt("add the reader")
    (repo / "reader.py").write_text("x\n")
    claude.bash("git add -A && git commit -q -m 'Add reader'")

    claude.end("clear")
    text = context_of(start(client_env, repo, "clear"))

    assert "before /clear, nothing new to capture since the last capture; uncommitted: 0 files +0 −0." in text
    assert not ledger.sessions(kind="clear")


def test_with_auto_checkpoint_off_clear_captures_nothing(ledger, repo, claude, client_env) -> None:
    work_then_clear_setup(repo, claude)
    write_config(client_env, auto_checkpoint_on_clear=False)

    claude.end("clear")
    result = start(client_env, repo, "clear")

    assert not ledger.sessions(kind="clear") and not client_env.queue()
    assert result.stdout == b""  # no history on the server, nothing captured to report
    claude.end("prompt_input_exit")  # other reasons still capture the trailing segment
    assert len(ledger.sessions(kind="end")) == 1


def test_the_environment_can_switch_clear_capture_off_over_the_file(ledger, repo, claude, client_env) -> None:
    work_then_clear_setup(repo, claude)
    write_config(client_env, auto_checkpoint_on_clear=True)

    claude.end("clear", SESSIONLEDGER_AUTO_CHECKPOINT_ON_CLEAR="false")

    assert not ledger.sessions(kind="clear") and not client_env.queue()


def test_verify_before_clear_reports_uncommitted_work_to_the_user(ledger, repo, claude, client_env) -> None:
    work_then_clear_setup(repo, claude)
    write_config(client_env, verify_before_clear=True, auto_resume_on_start=False)

    claude.end("clear")
    data = answer(start(client_env, repo, "clear"))

    assert data["systemMessage"] == "Uncommitted work from before /clear: 2 files +5 −1 (reader.py, notes.txt)."
    assert data["hookSpecificOutput"]["additionalContext"].startswith(data["systemMessage"])


# --- settings and init -------------------------------------------------------------------------


def test_config_get_and_set_with_the_environment_winning(client_env) -> None:
    assert client_env.cli("config", "set", "auto_resume_on_start", "off").returncode == 0
    assert client_env.cli("config", "set", "context_budget", "4000").returncode == 0
    stored = json.loads((client_env.config_dir / "config.json").read_text())
    assert stored["auto_resume_on_start"] is False and stored["context_budget"] == 4000

    assert client_env.cli("config", "get", "auto_resume_on_start").stdout == "false\n"
    overridden = client_env.cli("config", "get", "auto_resume_on_start", SESSIONLEDGER_AUTO_RESUME_ON_START="yes")
    assert overridden.stdout.startswith("true\n(from SESSIONLEDGER_AUTO_RESUME_ON_START")
    listing = json.loads(client_env.cli("config", "get", "--json").stdout)
    assert listing["context_budget"] == {"value": 4000, "source": "file"}
    assert listing["verify_before_clear"] == {"value": False, "source": "default"}

    bad = client_env.cli("config", "set", "context_budget", "lots")
    unknown = client_env.cli("config", "set", "colour", "blue")
    assert bad.returncode == 1 and "context_budget: expected a whole number" in bad.stderr
    assert unknown.returncode == 1 and "unknown setting 'colour'" in unknown.stderr
    assert client_env.cli("config", "unset", "context_budget").returncode == 0
    assert client_env.cli("config", "get", "context_budget").stdout == "2000\n"


def guarded(name: str) -> str:
    return f"if command -v sessionledger >/dev/null 2>&1; then exec sessionledger hook {name} --via team; fi"


def test_init_installs_session_start_and_end_hooks_and_registers_the_mcp_server(repo, client_env) -> None:
    mcp_file = repo / ".mcp.json"
    mcp_file.write_text(json.dumps({"mcpServers": {"other": {"command": "other-server"}}, "x": 1}))

    first = client_env.cli("init", "--team", "--mcp", cwd=repo)
    second = client_env.cli("init", "--team", "--mcp", cwd=repo)

    assert first.returncode == 0 and "Registered the MCP server" in first.stdout
    assert "Already registered" in second.stdout
    hooks = json.loads((repo / ".claude" / "settings.json").read_text())["hooks"]
    assert hooks["SessionStart"] == [
        {
            "matcher": "startup|resume|clear|compact|fork",
            "hooks": [{"type": "command", "command": guarded("session-start"), "timeout": 30}],
        }
    ]
    assert hooks["SessionEnd"][0]["hooks"][0]["command"] == guarded("session-end")
    assert json.loads(mcp_file.read_text()) == {
        "mcpServers": {
            "other": {"command": "other-server"},
            "sessionledger": {"command": "sessionledger", "args": ["mcp"]},
        },
        "x": 1,
    }

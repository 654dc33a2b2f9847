"""Codex CLI and Gemini CLI sessions end to end, on the real public transcripts of
tests/fixtures/agents/: capture by the git post-commit hook (a commit made by hand while the
session runs) and by `import`, the live server's ingest and worker, the API and the session
page, and `restore` writing them back where the agent resumes them (docs/agents.md).

Fidelity is checked against the raw records themselves (every prompt, tool call id and result
id), not only against our own parser: the same bar as Claude Code's tests.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.test import Client as WebClient

from sessionledger import agents
from sessionledger.core.formats import get_format
from sessionledger.core.formats.locate import project_hash
from sessionledger.core.redaction import Redactor
from tests.client.conftest import ClientEnv, git, head
from tests.client.test_session_files import process_all
from tests.fixtures.agents.helpers import load, names

CODEX = names("codex")
GEMINI = names("gemini")
CALLS = {"function_call", "custom_tool_call", "local_shell_call"}
OUTPUTS = {"function_call_output", "custom_tool_call_output"}


# --- placing a real transcript where the agent keeps it, as a session of the test repository ----


def codex_file(env: ClientEnv, repo: Path, name: str) -> tuple[Path, bytes]:
    """The rollout in today's date folder of $CODEX_HOME, its `session_meta` cwd set to `repo`
    (the only change: the session was recorded in another user's checkout)."""
    first, rest = load("codex", name).split(b"\n", 1)
    meta = json.loads(first)
    meta["payload"]["cwd"] = str(repo)
    data = json.dumps(meta, ensure_ascii=False, separators=(",", ":")).encode() + b"\n" + rest
    path = env.home / ".codex" / "sessions" / time.strftime("%Y/%m/%d") / name.removesuffix(".gz")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path, data


def gemini_file(env: ClientEnv, repo: Path, name: str) -> tuple[Path, bytes]:
    """The chat recording, unchanged, in the project folder Gemini CLI uses for `repo`."""
    data = load("gemini", name)
    path = env.home / ".gemini" / "tmp" / project_hash(str(repo)) / "chats" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path, data


def as_jsonl(data: bytes) -> bytes:
    """A pre-v0.39 recording in the JSONL form Gemini CLI migrates it to (metadata, then messages)."""
    doc = json.loads(data)
    rows = [{k: v for k, v in doc.items() if k != "messages"}, *doc["messages"]]
    return b"".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode() + b"\n" for r in rows)


def expected(agent: str, data: bytes) -> bytes:
    """What the server must hold: the agent's slimming, then redaction (as for Claude Code)."""
    return Redactor().redact_bytes(get_format(agent).slim(data)[0]).data


def commit_by_hand(env: ClientEnv, repo: Path, name: str) -> str:
    (repo / name).write_text(f"{name}\n")
    git(repo, "add", "-A", env=env.env())
    done = subprocess.run(["git", "commit", "-q", "-m", f"Add {name}"], cwd=repo, env=env.env(), capture_output=True)
    assert done.returncode == 0 and done.stdout == done.stderr == b"", done
    return head(repo)


def install_git_hook(env: ClientEnv, repo: Path) -> None:
    result = env.cli("init", "--git-hook", "--project", "acme-api", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr


# --- what the raw records say, independently of our parser -----------------------------------


def codex_truth(data: bytes) -> dict[str, list[str]]:
    records = [json.loads(line) for line in data.splitlines() if line.strip()]
    payloads = [(r["type"], r["payload"]) for r in records if isinstance(r.get("payload"), dict)]
    return {
        "prompts": [p["message"] for t, p in payloads if t == "event_msg" and p.get("type") == "user_message"],
        "calls": [p["call_id"] for t, p in payloads if t == "response_item" and p.get("type") in CALLS],
        "results": [p["call_id"] for t, p in payloads if t == "response_item" and p.get("type") in OUTPUTS],
        "web_searches": [p for t, p in payloads if t == "response_item" and p.get("type") == "web_search_call"],
    }


def gemini_truth(data: bytes) -> dict[str, list[str]]:
    doc = json.loads(data)
    typed = [m for m in doc["messages"] if m.get("type") == "user"]
    calls = [c for m in doc["messages"] if m.get("type") == "gemini" for c in m.get("toolCalls") or []]
    return {
        "prompts": [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"] for m in typed],
        "calls": [c["id"] for c in calls],
        "results": [c["id"] for c in calls if c.get("status") in ("success", "error", "cancelled")],
    }


def api_messages(ledger, session_id: object, query: str = "") -> list[dict]:
    response = ledger.api.get(f"/api/v1/projects/{ledger.slug}/sessions/{session_id}/messages?limit=1000{query}")
    assert response.status_code == 200, response.content
    return response.json()["results"]


def assert_recovered(messages: list[dict], truth: dict[str, list[str]]) -> None:
    """Every prompt, tool call and result id of the raw records is in the API's messages."""
    prompts = [m["content"] for m in messages if m["kind"] == "prompt"]
    assert len(prompts) == len(truth["prompts"])
    for typed, shown in zip(truth["prompts"], prompts, strict=True):  # the request, without IDE context
        assert typed.split("## My request for Codex:")[-1].strip()[:60] in shown
    calls = [m["tool"]["id"] for m in messages if m["kind"] == "tool_use"]
    assert [c for c in calls if c is not None] == truth["calls"]
    assert calls.count(None) == len(truth.get("web_searches", []))  # Codex's web searches carry no call id
    assert sorted(m["tool"]["id"] for m in messages if m["kind"] == "tool_result") == sorted(truth["results"])


# --- Codex CLI ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CODEX)
def test_a_codex_session_is_captured_at_a_commit_made_by_hand(ledger, repo, client_env, world, name) -> None:
    install_git_hook(client_env, repo)
    path, data = codex_file(client_env, repo, name)
    starts = get_format("codex").turn_starts(data)
    first_turn = data[: starts[1]]  # the session as it was when the first commit was made
    path.write_bytes(first_turn)

    one = commit_by_hand(client_env, repo, "one.txt")
    path.write_bytes(data)  # Codex appends the second turn
    two = commit_by_hand(client_env, repo, "two.txt")

    first, second = ledger.session_for(one), ledger.session_for(two)
    session_id = json.loads(data.split(b"\n", 1)[0])["payload"]["id"]
    assert {first.agent, second.agent} == {"codex"} and first.agent_session_id == second.agent_session_id == session_id
    assert (first.start_offset, first.end_offset, second.start_offset, second.end_offset) == (
        0,
        len(first_turn),
        len(first_turn),
        len(data),
    )
    assert ledger.raw(first) == expected("codex", first_turn)
    assert ledger.raw(second) == expected("codex", data[len(first_turn) :])
    base = f"/api/v1/projects/{ledger.slug}/agent-sessions/{session_id}"
    listing = ledger.api.get(base).json()
    assert listing["agent"] == "codex" and listing["gaps"] == []
    stitched = ledger.api.get(f"{base}/transcript").content
    assert stitched == expected("codex", first_turn) + expected("codex", data[len(first_turn) :])
    assert [line for line in stitched.splitlines() if b"sessionledger_line_id" not in line] == [
        line for line, kept in zip(data.splitlines(), stitched.splitlines(), strict=True) if line == kept
    ]  # every line slimming did not touch is byte for byte the agent's

    process_all(ledger)
    messages = api_messages(ledger, first.pk) + api_messages(ledger, second.pk)
    assert_recovered(messages, codex_truth(data))
    tools = api_messages(ledger, first.pk, "&role=tool") + api_messages(ledger, second.pk, "&role=tool")
    assert tools == [m for m in messages if m["role"] == "tool"] and len(tools) == len(codex_truth(data)["results"])
    stamps = sorted(m["timestamp"] for m in messages if m["timestamp"])
    middle = stamps[len(stamps) // 2]
    later = api_messages(ledger, first.pk, f"&since={middle}") + api_messages(ledger, second.pk, f"&since={middle}")
    assert later and all(m["timestamp"] >= middle for m in later)

    page = WebClient()
    page.force_login(world.member)
    session, shell = next(
        (s, m)
        for s in (first, second)
        for m in api_messages(ledger, s.pk)
        if m["kind"] == "tool_use" and m["tool"]["name"] == "Bash"
    )
    html = page.get(f"/p/{ledger.slug}/s/{session.pk}").content.decode()
    words = re.findall(r"[A-Za-z0-9_.-]{4,}", shell["tool"]["input"]["command"])
    assert words and all(w in html for w in words[:5])  # the shell call shows its command, like Bash


@pytest.mark.parametrize("name", CODEX)
def test_codex_sessions_are_imported_cut_at_their_commits_and_restored_for_codex_resume(
    ledger, repo, client_env, name
) -> None:
    path, data = codex_file(client_env, repo, name)
    first, last = agents.get("codex").time_span(data)
    # A commit made during the session by its own shell tool: the rollout records the call and
    # its output around the commit's time, as Codex writes them.
    made = int(first + (last - first) / 2)
    stamp = datetime.fromtimestamp(made, UTC).strftime("%Y-%m-%dT%H:%M:%S+0000")
    (repo / "imported.txt").write_text("x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "From codex", env={**client_env.env(), "GIT_COMMITTER_DATE": stamp})
    call = {"type": "function_call", "name": "exec_command", "call_id": "call_commit_1"}
    call["arguments"] = json.dumps({"cmd": "git add -A && git commit -m 'From codex'", "workdir": str(repo)})
    output = {"type": "function_call_output", "call_id": "call_commit_1", "output": "Process exited with code 0\n"}
    iso = datetime.fromtimestamp(made, UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    lines = [
        json.dumps({"timestamp": iso, "type": "response_item", "payload": p}).encode() + b"\n" for p in (call, output)
    ]
    starts = get_format("codex").turn_starts(data)
    data = data[: starts[1]] + b"".join(lines) + data[starts[1] :]
    path.write_bytes(data)

    result = client_env.cli("import", "--agent", "codex", "--project", "acme-api", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    checkpoint = ledger.session_for(head(repo))
    end = ledger.session_for(head(repo), kind="end")
    assert checkpoint.end_offset == starts[1] + sum(map(len, lines)) == end.start_offset and end.end_offset == len(data)
    assert "Nothing new to import" in client_env.cli("import", "--agent", "codex", cwd=repo).stdout

    process_all(ledger)
    session_id = checkpoint.agent_session_id
    restored = client_env.cli("restore", session_id, cwd=repo)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    new_id = re.search(r"codex resume (\S+)", restored.stdout).group(1)
    [written] = (client_env.home / ".codex" / "sessions").rglob(f"rollout-*-{new_id}.jsonl")
    back = written.read_bytes()
    meta = json.loads(back.split(b"\n", 1)[0])["payload"]
    assert meta["id"] == new_id and b"sessionledger_line_id" not in back
    assert codex_truth(back) == codex_truth(data)  # every prompt, call and output, as Codex replays them
    assert get_format("codex").turn_starts(back) and len(back.splitlines()) == len(data.splitlines())

    forked = client_env.cli("fork", head(repo), "--turn", "1", cwd=repo)
    assert forked.returncode == 0, forked.stdout + forked.stderr
    worktree, fork_id = re.search(r"cd (\S+) && codex resume (\S+)", forked.stdout).groups()
    [rollout] = (client_env.home / ".codex" / "sessions").rglob(f"rollout-*-{fork_id}.jsonl")
    cut = rollout.read_bytes()
    meta = json.loads(cut.split(b"\n", 1)[0])["payload"]
    assert (meta["id"], meta["forked_from_id"], meta["cwd"]) == (fork_id, session_id, worktree)
    assert len(get_format("codex").turn_starts(cut)) == 1 and git(Path(worktree), "rev-parse", "HEAD") == head(repo)


# --- Gemini CLI --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", GEMINI)
def test_a_legacy_gemini_chat_is_captured_as_whole_file_snapshots(ledger, repo, client_env, world, name) -> None:
    install_git_hook(client_env, repo)
    path, data = gemini_file(client_env, repo, name)
    doc = json.loads(data)
    prompts = [i for i, m in enumerate(doc["messages"]) if m.get("type") == "user"]
    early = {**doc, "messages": doc["messages"][: prompts[1]]}
    path.write_text(json.dumps(early, indent=2, ensure_ascii=False))  # as Gemini CLI writes it: whole
    one = commit_by_hand(client_env, repo, "one.txt")
    path.write_bytes(data)  # rewritten whole with the rest of the conversation
    two = commit_by_hand(client_env, repo, "two.txt")

    three = commit_by_hand(client_env, repo, "three.txt")  # the chat did not change since
    assert ledger.sessions(commit_hash=three) == []
    first, second = ledger.session_for(one), ledger.session_for(two)
    assert first.agent == second.agent == "gemini" and first.agent_session_id == doc["sessionId"]
    assert (first.start_offset, second.start_offset, second.end_offset) == (0, 0, len(data))
    assert ledger.raw(second) == expected("gemini", data)
    base = f"/api/v1/projects/{ledger.slug}/agent-sessions/{doc['sessionId']}"
    listing = ledger.api.get(base).json()
    assert [s["id"] for s in listing["segments"]] == [str(second.pk)] and listing["gaps"] == []
    assert ledger.api.get(f"{base}/transcript").content == expected("gemini", data)

    process_all(ledger)
    assert_recovered(api_messages(ledger, second.pk), gemini_truth(data))
    assert len([m for m in api_messages(ledger, first.pk) if m["kind"] == "prompt"]) == 1
    page = WebClient()
    page.force_login(world.member)
    assert page.get(f"/p/{ledger.slug}/s/{second.pk}").status_code == 200

    restored = client_env.cli("restore", doc["sessionId"], cwd=repo)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    new_id = re.search(r"gemini --resume (\S+)", restored.stdout).group(1)
    [written] = path.parent.glob(f"session-*-{new_id[:8]}.json")  # a document: every version resumes it
    back = get_format("gemini").parse(written.read_bytes())
    original = get_format("gemini").parse(data)
    assert back.agent_session_id == new_id
    assert [(m["uuid"], m["kind"]) for m in back.messages] == [(m["uuid"], m["kind"]) for m in original.messages]


@pytest.mark.parametrize("name", GEMINI)
def test_a_jsonl_gemini_recording_is_captured_by_offsets_and_imported(ledger, repo, client_env, name) -> None:
    install_git_hook(client_env, repo)
    path, legacy = gemini_file(client_env, repo, name)
    path.unlink()
    path = path.with_suffix(".jsonl")
    data = as_jsonl(legacy)
    starts = get_format("gemini").turn_starts(data)
    path.write_bytes(data[: starts[1]])
    one = commit_by_hand(client_env, repo, "one.txt")
    with path.open("ab") as handle:
        handle.write(data[starts[1] :])
    two = commit_by_hand(client_env, repo, "two.txt")

    first, second = ledger.session_for(one), ledger.session_for(two)
    assert (first.end_offset, second.start_offset, second.end_offset) == (starts[1], starts[1], len(data))
    base = f"/api/v1/projects/{ledger.slug}/agent-sessions/{first.agent_session_id}"
    assert ledger.api.get(f"{base}/transcript").content == expected("gemini", data[: starts[1]]) + expected(
        "gemini", data[starts[1] :]
    )
    process_all(ledger)
    assert_recovered(api_messages(ledger, first.pk) + api_messages(ledger, second.pk), gemini_truth(legacy))

    forked = client_env.cli("fork", one, cwd=repo)  # at that commit: the end of turn 1
    assert forked.returncode == 0, forked.stdout + forked.stderr
    worktree, fork_id = re.search(r"cd (\S+) && gemini --resume (\S+)", forked.stdout).groups()
    chats = client_env.home / ".gemini" / "tmp" / project_hash(worktree) / "chats"
    [written] = chats.glob(f"session-*-{fork_id[:8]}.jsonl")
    cut = written.read_bytes()
    meta = json.loads(cut.split(b"\n", 1)[0])
    assert (meta["sessionId"], meta["projectHash"]) == (fork_id, project_hash(worktree))
    assert len(get_format("gemini").turn_starts(cut)) == 1


def test_import_finds_every_agents_sessions_of_the_repository(ledger, repo, client_env) -> None:
    codex_path, _ = codex_file(client_env, repo, CODEX[0])
    gemini_path, gemini_data = gemini_file(client_env, repo, GEMINI[0])
    elsewhere = client_env.home / ".gemini" / "tmp" / project_hash("/somewhere/else") / "chats" / GEMINI[1]
    elsewhere.parent.mkdir(parents=True)
    elsewhere.write_bytes(load("gemini", GEMINI[1]))
    past = "2025-01-01T00:00:00+0000"  # before every fixture: HEAD when each session ended
    git(repo, "commit", "-q", "--amend", "--no-edit", env={**client_env.env(), "GIT_COMMITTER_DATE": past})

    dry = client_env.cli("import", "--dry-run", "--project", "acme-api", cwd=repo)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert codex_path.name in dry.stdout and gemini_path.name in dry.stdout and elsewhere.name not in dry.stdout
    done = client_env.cli("import", "--project", "acme-api", cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    sessions = ledger.sessions(commit_hash=head(repo), kind="end")
    assert sorted(s.agent for s in sessions) == ["codex", "gemini"]
    [gemini] = [s for s in sessions if s.agent == "gemini"]
    assert (gemini.start_offset, gemini.end_offset) == (0, len(gemini_data))
    assert gzip.decompress(gzip.compress(ledger.raw(gemini))) == expected("gemini", gemini_data)
    assert os.path.exists(codex_path)


def test_gemini_after_tool_hook_captures_a_commit_made_by_its_shell_tool(ledger, repo, client_env) -> None:
    installed = client_env.cli("init", "--agent", "gemini", "--project", "acme-api", cwd=repo)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    settings = json.loads((repo / ".gemini" / "settings.json").read_text())
    [group] = settings["hooks"]["AfterTool"]
    assert group["matcher"] == "run_shell_command" and group["hooks"][0]["timeout"] == 30000
    again = client_env.cli("init", "--agent", "gemini", cwd=repo)
    assert "Already installed" in again.stdout
    assert "--git-hook" in client_env.cli("init", "--agent", "codex", cwd=repo).stderr
    install_git_hook(client_env, repo)

    path, legacy = gemini_file(client_env, repo, GEMINI[0])
    path.unlink()
    path = path.with_suffix(".jsonl")
    data = as_jsonl(legacy)
    path.write_bytes(data)
    command = "git add -A && git commit -q -m 'From gemini'"
    (repo / "g.txt").write_text("g\n")
    ran = subprocess.run(command, shell=True, cwd=repo, env=client_env.env(GEMINI_CLI="1"), capture_output=True)
    assert ran.returncode == 0 and ledger.sessions(commit_hash=head(repo)) == []  # left to AfterTool

    payload = {
        "session_id": json.loads(data.split(b"\n", 1)[0])["sessionId"],
        "transcript_path": str(path),
        "cwd": str(repo),
        "hook_event_name": "AfterTool",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "tool_name": "run_shell_command",
        "tool_input": {"command": command, "description": "commit"},
        "tool_response": {"llmContent": "", "returnDisplay": ""},
    }
    bin_dir = os.path.dirname(sys.executable)  # the guarded command runs the `sessionledger` on PATH
    env = client_env.env(GEMINI_CLI="1", PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(["sh", "-c", group["hooks"][0]["command"]], input=json.dumps(payload).encode(), env=env)
    assert done.returncode == 0
    session = ledger.session_for(head(repo))
    assert (session.agent, session.start_offset, session.end_offset) == ("gemini", 0, len(data))
    assert ledger.raw(session) == expected("gemini", data)

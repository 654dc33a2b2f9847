"""Every byte of a session: large tool outputs Claude Code saves under `<session>/tool-results/`
(2.1.2+), sub-agents in both layouts (`<session>/subagents/` and, before 2.1.2, beside the
session file), captured by the real hooks, kept by the server, shown, and restored
byte-identical (docs/client.md "Every byte of a session")."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.test import Client as WebClient
from django_scopes import scopes_disabled

from projects.scoping import project_scope
from sessionledger.core.formats.base import iter_lines, load_record
from sessions_app.models import Session
from sessions_app.processing import session_process
from tests.client.conftest import ClaudeSession, expected_upload, head
from tests.client.test_fork import unpaired_tool_uses
from tests.client.transcript_builder import TranscriptBuilder

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"


def build_log(lines: int = 3000) -> str:
    return "".join(f"step {n}: compiled module_{n}.py in {n % 7} ms\n" for n in range(lines))


def commit(claude: ClaudeSession, repo: Path, name: str) -> str:
    (repo / name).write_text(f"{name}\n")
    claude.bash(f"git add -A && git commit -q -m 'Add {name}'")
    return head(repo)


def process_all(ledger) -> None:
    with scopes_disabled():
        sessions = list(Session.objects.select_related("project", "author").all())
    for session in sessions:
        with project_scope(session.project):
            session_process(session=session)


def restore(client_env, repo: Path, session_id: str, *args: str) -> subprocess.CompletedProcess:
    result = client_env.cli("restore", session_id, *args, cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def test_a_large_tool_output_is_captured_shown_and_restored_byte_identical(ledger, repo, claude, client_env, world):
    claude.prompt("show me the build log")
    output = build_log()
    saved = claude.persisted_tool_call("make build 2>&1", output)
    claude.builder.new_response().assistant_text("The build is clean.").turn_end()
    commit(claude, repo, "a.py")
    claude.end()
    original, original_output = claude.content(), saved.read_bytes()

    checkpoint = ledger.session_for(head(repo))
    assert [e["name"] for e in checkpoint.subagents if e.get("kind") == "tool_result"] == [saved.name]
    base = f"/api/v1/projects/{ledger.slug}/agent-sessions/{claude.session_id}"
    listing = ledger.api.get(base).json()
    assert listing["files"] == [{"path": f"tool-results/{saved.name}", "kind": "tool_result", "bytes": len(output)}]
    assert ledger.api.get(f"{base}/transcript", {"part": f"tool-results/{saved.name}"}).content == original_output

    process_all(ledger)
    messages = ledger.api.get(
        f"/api/v1/projects/{ledger.slug}/sessions/{checkpoint.pk}/messages", {"kind": "tool_result"}
    )
    [result] = [m for m in messages.json()["results"] if "persisted_output" in m]
    assert result["content"] == output  # the whole output, not the 2 KB preview
    assert result["persisted_output"]["preview"].startswith("<persisted-output>")
    page = WebClient()
    page.force_login(world.member)
    html = page.get(f"/p/{ledger.slug}/s/{checkpoint.pk}").content.decode()
    assert "step 300: compiled module_300.py" in html  # beyond what the preview held

    claude.path.unlink()  # Claude Code's clean-up took the transcript and its directory
    shutil.rmtree(saved.parent.parent)
    printed = restore(client_env, repo, claude.session_id, "--same-id")

    assert claude.path.read_bytes() == original
    assert saved.read_bytes() == original_output
    assert "1 file(s)" in printed.stdout


def test_a_tool_output_is_redacted_before_it_leaves_the_machine(ledger, repo, claude, client_env) -> None:
    claude.prompt("print the environment")
    saved = claude.persisted_tool_call("env", build_log(1500) + f"GITHUB_TOKEN={SECRET}\n")
    commit(claude, repo, "a.py")

    base = f"/api/v1/projects/{ledger.slug}/agent-sessions/{claude.session_id}"
    stored = ledger.api.get(f"{base}/transcript", {"part": f"tool-results/{saved.name}"}).content
    assert SECRET.encode() not in stored and b"GITHUB_TOKEN=[REDACTED:" in stored
    assert SECRET.encode() in saved.read_bytes()  # the local file is Claude Code's, untouched
    assert sum(ledger.session_for(head(repo)).redaction.values()) >= 1


def test_an_older_layout_sub_agent_is_captured_and_restored_where_it_was(ledger, repo, claude, client_env) -> None:
    b = claude.builder
    b.version = "2.0.76"
    claude.prompt("delegate the parser")
    b.new_response().task("Write parser", "Write parse.py", agent_id="a1b2c3d", links=("result", "trailer"))
    sub = b.subagent("a1b2c3d")
    sub.user("Write parse.py").tool_call("Write", {"file_path": f"{repo}/parse.py", "content": "P = 1\n"}, result="ok")
    legacy = claude.subagent_file("a1b2c3d", legacy=True)
    legacy.write_bytes(sub.assistant_text("Wrote parse.py.").build())
    stranger = claude.path.parent / "agent-ffff000.jsonl"  # another session's sub-agent, same directory
    stranger.write_bytes(
        TranscriptBuilder("0000aaaa-0000-4000-8000-000000000000", agent_id="ffff000").user("x").build()
    )
    claude.flush()
    commit(claude, repo, "parse.py")
    claude.end()
    original, original_agent, other = claude.content(), legacy.read_bytes(), stranger.read_bytes()

    checkpoint = ledger.session_for(head(repo))
    assert [(e["agent_id"], e["path"]) for e in checkpoint.subagents] == [("a1b2c3d", "agent-a1b2c3d.jsonl")]
    listing = ledger.api.get(f"/api/v1/projects/{ledger.slug}/agent-sessions/{claude.session_id}").json()
    assert [f["path"] for f in listing["files"]] == ["agent-a1b2c3d.jsonl"]

    claude.path.unlink()
    legacy.unlink()
    restore(client_env, repo, claude.session_id, "--same-id")

    assert claude.path.read_bytes() == original
    assert legacy.read_bytes() == original_agent
    assert stranger.read_bytes() == other


def test_a_new_layout_sub_agent_is_restored_under_a_fresh_id_with_its_session(ledger, repo, claude, client_env):
    b = claude.builder
    claude.prompt("delegate")
    b.new_response().task("Write b", "Write b.py", agent_id="b0b0b0b")
    sub = b.subagent("b0b0b0b").user("Write b.py").assistant_text("ok")
    claude.subagent_file("b0b0b0b").write_bytes(sub.build())
    claude.flush()
    commit(claude, repo, "b.py")
    claude.end()

    printed = restore(client_env, repo, claude.session_id)

    new_id = next(line.split()[-1] for line in printed.stdout.splitlines() if "claude -r" in line)
    restored = claude.path.parent / new_id / "subagents" / "agent-b0b0b0b.jsonl"
    lines = [load_record(line) for _, line in iter_lines(restored.read_bytes())]
    assert lines and all(rec["sessionId"] == new_id for rec in lines)
    assert restored.read_bytes().replace(new_id.encode(), claude.session_id.encode()) == sub.build()


def test_import_takes_older_layout_sub_agents_with_their_session(ledger, repo, claude, client_env) -> None:
    b = claude.builder
    b.version = "2.0.50"
    claude.prompt("delegate the docs")
    b.new_response().task("Docs", "Write the docs", agent_id="d0c5d0c")
    sub = b.subagent("d0c5d0c").user("Write the docs").assistant_text("Done.")
    claude.subagent_file("d0c5d0c", legacy=True).write_bytes(sub.build())
    claude.flush()
    (repo / "docs.md").write_text("# docs\n")
    b.at(datetime.now(UTC))  # the call's timestamps bracket the commit, as in a real transcript
    claude.bash("git add -A && git commit -q -m 'Docs'", hook=False)  # before the hooks were installed
    claude.builder.new_response().assistant_text("Committed.").turn_end()
    claude.flush()

    result = client_env.cli("import", cwd=repo)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "no conversation in it" not in result.stdout
    checkpoint = ledger.session_for(head(repo))
    assert [e["path"] for e in checkpoint.subagents] == ["agent-d0c5d0c.jsonl"]
    assert ledger.raw(checkpoint) == expected_upload(claude.content()[: checkpoint.end_offset])


def test_restore_answers_a_tool_call_the_capture_ended_on(ledger, repo, claude, client_env, tmp_path) -> None:
    claude.prompt("commit the fix")
    claude.builder.new_response().tool_use("Bash", {"command": "git commit -am fix"})
    open_call = claude.builder.last_tool_id
    claude.flush()  # Claude Code has not written the result when the hook runs
    (repo / "fix.py").write_text("FIX = 1\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=client_env.env())
    subprocess.run(["git", "commit", "-q", "-m", "Fix"], cwd=repo, check=True, env=client_env.env())
    client_env.hook(
        "post-tool-use", claude.payload("git commit -am fix", {"stdout": "", "stderr": ""}, repo, open_call)
    )

    printed = restore(client_env, repo, claude.session_id)

    new_id = next(line.split()[-1] for line in printed.stdout.splitlines() if "claude -r" in line)
    data = (claude.path.parent / f"{new_id}.jsonl").read_bytes()
    assert unpaired_tool_uses(data) == set()
    last = load_record(data.rstrip(b"\n").rsplit(b"\n", 1)[-1])
    assert last["message"]["content"][0]["tool_use_id"] == open_call and last["sessionId"] == new_id
    assert "answered 1 tool call(s)" in printed.stdout
    fake_claude = tmp_path / "claude-check.py"  # what `claude -r` insists on (docs/claude-code.md §1.11)
    fake_claude.write_text(CHECK)
    assert subprocess.run([sys.executable, str(fake_claude)], input=data, check=False).returncode == 0


CHECK = """
import json, sys
uses, results = [], set()
for line in sys.stdin.buffer.read().splitlines():
    rec = json.loads(line)
    content = (rec.get("message") or {}).get("content")
    for block in content if isinstance(content, list) else []:
        if block.get("type") == "tool_use": uses.append(block["id"])
        if block.get("type") == "tool_result": results.add(block["tool_use_id"])
missing = [u for u in uses if u not in results]
sys.exit(f"API Error 400: tool_use ids were found without tool_result blocks: {missing}" if missing else 0)
"""


def test_the_transcript_part_of_an_unknown_file_is_a_json_404(ledger, repo, claude) -> None:
    claude.prompt("x")
    commit(claude, repo, "x.py")
    base = f"/api/v1/projects/{ledger.slug}/agent-sessions/{claude.session_id}/transcript"
    for part in ("tool-results/nope.txt", "../../etc/passwd", "subagents/agent-zzz.jsonl"):
        response = ledger.api.get(base, {"part": part})
        assert response.status_code == 404 and json.loads(response.content)["error"]["field"] == "part"

"""`turns`, `fork` and `restore` against the live server: a conversation captured by the real hooks
(parallel tool calls, a sub-agent, a compaction, three commits) is listed, forked at every turn,
and restored from its segments."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django_scopes import scopes_disabled

from sessionledger.core.formats import cut_after_turn, cut_at_offset, encode_project_dir, turn_starts
from sessionledger.core.formats.resume import rewrite_for_resume, top_level_spans
from sessions_app.models import Session
from tests.client.conftest import ClaudeSession, expected_upload, git, head

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
PROMPTS = ["Plan the parser", "Add module a", "Delegate module b", "/compact", "Add module c", "Explain the design"]


def converse(claude: ClaudeSession, repo: Path) -> dict[int, str]:
    """Six turns, three commits; returns the commit each turn ended at."""
    b = claude.builder
    base = head(repo)
    b.file_history_snapshot().prompt(PROMPTS[0]).thinking("Look at the layout first.").assistant_text("Reading.")
    b.new_response().parallel_tools(
        [("Read", {"file_path": f"{repo}/README.md"}, "# app"), ("Grep", {"pattern": "parse"}, "no matches")]
    )
    b.new_response().assistant_text("Plan: a, b, c.").turn_end()
    claude.flush()

    b.prompt(PROMPTS[1])
    claude.flush()
    (repo / "a.py").write_text("A = 1\n")
    claude.bash("git add -A && git commit -q -m 'Add a'")
    a = head(repo)
    b.new_response().assistant_text("Added a.").turn_end()

    b.prompt(PROMPTS[2]).new_response().task("Write b", "Write b.py", agent_id="b0b0b0b")
    sub = b.subagent("b0b0b0b")
    sub.user("Write b.py").tool_call("Write", {"file_path": f"{repo}/b.py", "content": "B = 2\n"}, result="ok")
    claude.subagent_file("b0b0b0b").write_bytes(sub.assistant_text("Wrote b.py.").build())
    claude.flush()
    (repo / "b.py").write_text("B = 2\n")
    claude.bash("git add -A && git commit -q -m 'Add b'")
    b_commit = head(repo)
    b.new_response().assistant_text("b is in.").turn_end()

    b.slash_command("compact", stdout="Compacted").compact("Modules a and b exist; c is next.", trigger="manual")
    b.prompt(PROMPTS[4])
    claude.flush()
    (repo / "c.py").write_text("C = 3\n")
    claude.bash("git add -A && git commit -q -m 'Add c'")
    c = head(repo)
    b.new_response().assistant_text("Added c.").turn_end()

    b.prompt(PROMPTS[5]).assistant_text("Three small modules.").turn_end()
    claude.flush()
    claude.end()
    return {1: base, 2: a, 3: b_commit, 4: b_commit, 5: c, 6: c}


def new_session_id(stdout: str) -> str:
    match = re.search(r"^  session\s+([0-9a-f-]{36})", stdout, re.M)
    assert match, stdout
    return match.group(1)


def stitched_end(ledger, agent_session_id: str, commit: str) -> int:
    """Where a commit's checkpoint segment ends in the stitched (slimmed, redacted) transcript."""
    position = 0
    for session in sorted(ledger.sessions(agent_session_id=agent_session_id), key=lambda s: s.start_offset):
        if session.kind == "task":
            continue
        position += len(ledger.raw(session))
        if session.commit_hash == commit and session.kind == "checkpoint":
            return position
    raise AssertionError(f"no checkpoint for {commit}")


def undo_rewrite(data: bytes, new_id: str, old_id: str, new_cwd: Path, old_cwd: Path) -> bytes:
    return data.replace(new_id.encode(), old_id.encode()).replace(str(new_cwd).encode(), str(old_cwd).encode())


def unpaired_tool_uses(data: bytes) -> set[str]:
    uses, results = set(), set()
    for line in data.splitlines():
        record = json.loads(line)
        content = (record.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use":
                uses.add(block["id"])
            elif block.get("type") == "tool_result":
                results.add(block["tool_use_id"])
    return uses - results


def test_turns_lists_every_turn_with_its_commit_and_prompt(ledger, repo, claude, client_env) -> None:
    commits = converse(claude, repo)
    result = client_env.cli("turns", cwd=repo)  # HEAD's session
    assert result.returncode == 0, result.stderr
    # A turn's row starts with its number; a step's with its short id, which may be all digits.
    rows = [line for line in result.stdout.splitlines() if re.match(r"\s*\d{1,4}  ", line)]
    assert [int(r.split()[0]) for r in rows] == [1, 2, 3, 4, 5, 6]
    for number, row in enumerate(rows, 1):
        assert PROMPTS[number - 1] in row
        assert commits[number][:8] in row if number > 1 else f"{commits[2][:8]}^" in row
    assert "1 file +1 -0" in rows[1] and "·" in rows[3]

    as_json = json.loads(client_env.cli("turns", commits[3][:10], "--json", cwd=repo).stdout)
    assert [t["checkpoint"] for t in as_json] == [commits[2], *(commits[n] for n in range(2, 7))]
    assert as_json[0]["checkpoint_is_parent"] is True


def test_fork_at_each_turn_writes_a_resumable_prefix_and_a_worktree_at_that_turns_commit(
    ledger, repo, claude, client_env, tmp_path
) -> None:
    commits = converse(claude, repo)
    original, branch_before = claude.content(), git(repo, "branch", "--show-current")
    stitched = expected_upload(original)
    config_dir = tmp_path / "claude-config"

    for turn in range(1, 7):
        worktree = tmp_path / f"fork-{turn}"
        result = client_env.cli(
            "fork", claude.session_id, "--turn", str(turn), "--worktree", str(worktree),
            cwd=repo, CLAUDE_CONFIG_DIR=str(config_dir),
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert head(worktree) == commits[turn]
        new_id = new_session_id(result.stdout)
        assert f"claude -r {new_id}" in result.stdout
        forked = (config_dir / "projects" / encode_project_dir(str(worktree)) / f"{new_id}.jsonl").read_bytes()

        assert undo_rewrite(forked, new_id, claude.session_id, worktree, repo) == cut_after_turn(stitched, turn)
        assert stitched.startswith(undo_rewrite(forked, new_id, claude.session_id, worktree, repo))
        assert len(turn_starts(forked)) == turn
        assert len(cut_after_turn(stitched, turn)) in [*turn_starts(stitched), len(stitched)]  # a turn boundary
        assert unpaired_tool_uses(forked) == set()
        lines = [json.loads(line) for line in forked.splitlines()]
        assert {r["sessionId"] for r in lines if "sessionId" in r} == {new_id}
        assert {r["cwd"] for r in lines if "cwd" in r} == {str(worktree)}

    assert claude.content() == original
    assert git(repo, "branch", "--show-current") == branch_before and head(repo) == commits[6]
    assert b"isCompactSummary" in forked and b"b0b0b0b" in forked


def test_fork_of_a_commit_forks_right_after_the_call_that_made_it(ledger, repo, claude, client_env, tmp_path) -> None:
    commits = converse(claude, repo)
    config_dir = tmp_path / "claude-config"
    worktree = tmp_path / "wt"
    result = client_env.cli(
        "fork", commits[3][:10], "--worktree", str(worktree), cwd=repo, CLAUDE_CONFIG_DIR=str(config_dir)
    )
    assert result.returncode == 0, result.stderr
    assert f"at step {commits[3][:10]} (commit: 'Add b') in turn 3 of 6" in result.stdout
    assert head(worktree) == commits[3]
    assert git(repo, "rev-parse", f"fork/{claude.session_id[:8]}-at-{commits[3][:10]}") == commits[3]
    new_id = new_session_id(result.stdout)
    forked = (config_dir / "projects" / encode_project_dir(str(worktree)) / f"{new_id}.jsonl").read_bytes()
    stitched = expected_upload(claude.content())
    assert undo_rewrite(forked, new_id, claude.session_id, worktree, repo) == cut_at_offset(
        stitched, stitched_end(ledger, claude.session_id, commits[3])
    )
    assert b"b is in." not in forked and b"Add b" in forked  # cut after the commit, not at the turn's end


def test_fork_exec_starts_claude_in_the_worktree(ledger, repo, claude, client_env, tmp_path) -> None:
    converse(claude, repo)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "claude"
    fake.write_text(f'#!/bin/sh\necho "$PWD $*" > {tmp_path}/claude-ran\n')
    fake.chmod(0o755)
    result = client_env.cli(
        "fork", claude.session_id, "--turn", "2", "--worktree", str(tmp_path / "wt"), "--exec",
        cwd=repo, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    ran = (tmp_path / "claude-ran").read_text().split()
    assert ran[0] == str(tmp_path / "wt") and ran[1] == "-r" and len(ran[2]) == 36


def test_fork_drops_thinking_the_redactor_changed_and_keeps_the_chain_whole(
    ledger, repo, claude, client_env, tmp_path
) -> None:
    b = claude.builder
    b.prompt("Deploy it").thinking(f"The token is {SECRET}, careful.")
    secret_thinking = b.last_uuid
    parent_of_secret = b.lines[-2]["uuid"]
    b.thinking("Mentions [REDACTED:github] literally but nothing was redacted.").assistant_text("Deploying.")
    claude.flush()
    (repo / "d.txt").write_text("d\n")
    claude.bash("git add -A && git commit -q -m 'Deploy'")
    b.new_response().assistant_text("Deployed.").turn_end()
    b.prompt("Thanks").assistant_text("You're welcome.").turn_end()
    claude.flush()
    claude.end()

    def fork(name: str) -> list[dict]:
        result = client_env.cli("fork", claude.session_id, "--turn", "1", "--worktree", str(tmp_path / name), cwd=repo)
        assert result.returncode == 0, result.stderr
        path = client_env.home / ".claude" / "projects" / encode_project_dir(str(tmp_path / name))
        data = (path / f"{new_session_id(result.stdout)}.jsonl").read_bytes()
        assert SECRET.encode() not in data
        return [json.loads(line) for line in data.splitlines()]

    lines = fork("with-local-record")
    assert secret_thinking not in {r.get("uuid") for r in lines}
    child = next(r for r in lines if r.get("type") == "assistant" and "literally" in json.dumps(r))
    assert child["parentUuid"] == parent_of_secret  # re-attached past the dropped line

    for record in (client_env.state_dir / "sent").iterdir():  # no local record: detect the mark
        record.unlink()
    lines = fork("detected")
    assert secret_thinking not in {r.get("uuid") for r in lines}
    assert not any("literally" in json.dumps(r) for r in lines if r.get("type") == "assistant")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["00000000-0000-4000-8000-000000000000"], "no captured session or agent session"),
        (["--turn", "0", "HEAD"], "--turn counts from 1"),
        (["--turn", "9"], "no turn 9: agent session"),
        (["not-a-ref"], "neither a session id nor a commit"),
    ],
)
def test_fork_refuses_bad_input_in_one_line(ledger, repo, claude, client_env, args, message) -> None:
    converse(claude, repo)
    if args == ["--turn", "9"]:
        args = [claude.session_id, *args]
    result = client_env.cli("fork", *args, cwd=repo)
    assert result.returncode == 1 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == ""


def test_fork_outside_a_repository_says_so(ledger, repo, claude, client_env, tmp_path) -> None:
    converse(claude, repo)
    result = client_env.cli("fork", claude.session_id, "--project", "acme-api", cwd=tmp_path)
    assert result.returncode == 1 and "inside the git repository" in result.stderr


# --- restore ------------------------------------------------------------------------------------


def segments_of(claude: ClaudeSession) -> list[Session]:
    with scopes_disabled():
        return list(Session.objects.filter(agent_session_id=claude.session_id).order_by("start_offset"))


@pytest.mark.parametrize("commits", [1, 2])
def test_restore_stitches_two_and_three_segments_back_to_the_original_bytes(
    ledger, repo, claude, client_env, commits
) -> None:
    for n in range(commits):
        claude.prompt(f"step {n}")
        (repo / f"s{n}.py").write_text(f"S = {n}\n")
        claude.bash(f"git add -A && git commit -q -m 'Step {n}'")
    claude.prompt("wrap up")
    claude.end()
    assert len(segments_of(claude)) == commits + 1
    original = claude.content()
    claude.path.unlink()  # Claude Code's clean-up

    result = client_env.cli("restore", claude.session_id, "--same-id", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert claude.path.read_bytes() == original
    again = client_env.cli("restore", claude.session_id, "--same-id", cwd=repo)
    assert "Already restored" in again.stdout

    fresh = client_env.cli("restore", claude.session_id, cwd=repo)
    new_id = re.search(r"claude -r (\S+)", fresh.stdout).group(1)
    copy = (claude.path.parent / f"{new_id}.jsonl").read_bytes()
    assert new_id != claude.session_id and copy.replace(new_id.encode(), claude.session_id.encode()) == original


def test_restore_reports_a_gap_and_writes_nothing(ledger, repo, claude, client_env) -> None:
    for n in range(2):
        claude.prompt(f"step {n}")
        (repo / f"s{n}.py").write_text(f"S = {n}\n")
        claude.bash(f"git add -A && git commit -q -m 'Step {n}'")
    claude.prompt("wrap up")
    claude.end()
    with scopes_disabled():
        assert len(segments_of(claude)) == 3
        segments_of(claude)[1].delete()
    claude.path.unlink()

    refused = client_env.cli("restore", claude.session_id, "--same-id", cwd=repo)
    assert refused.returncode == 1 and "gap" in refused.stderr and "nothing written" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and not claude.path.exists()
    partial = client_env.cli("restore", claude.session_id, "--same-id", "--allow-gaps", cwd=repo)
    assert partial.returncode == 0 and "1 gap(s)" in partial.stdout and claude.path.exists()


def test_restore_of_a_session_still_on_disk_refuses_to_overwrite_it(ledger, repo, claude, client_env) -> None:
    claude.prompt("hello")
    claude.end()
    claude.builder.prompt("more, not captured yet")
    claude.flush()
    result = client_env.cli("restore", claude.session_id, "--same-id", cwd=repo)
    assert result.returncode == 1 and "--force" in result.stderr


def test_turns_opens_fzf_on_a_terminal_and_prints_the_fork_command(ledger, repo, claude, client_env, tmp_path) -> None:
    converse(claude, repo)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fzf = bin_dir / "fzf"
    fzf.write_text(f"#!/bin/sh\necho \"$@\" > {tmp_path}/fzf-args\ngrep -E '^ *3  '\n")  # the user picks turn 3
    fzf.chmod(0o755)
    controller, terminal = pty.openpty()
    env = client_env.env(PATH=os.pathsep.join([str(bin_dir), os.environ["PATH"]]))
    process = subprocess.run(
        [sys.executable, "-m", "sessionledger", "turns"],
        cwd=repo, env=env, stdin=terminal, stdout=terminal, stderr=subprocess.PIPE, timeout=60, check=False,
    )  # fmt: skip
    os.close(terminal)
    output = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    os.close(controller)
    assert process.returncode == 0, process.stderr
    assert f"sessionledger fork {claude.session_id} --at 3" in output.decode()
    assert "--header-lines 1" in (tmp_path / "fzf-args").read_text()


# --- the session file rewrite, unit level -------------------------------------------------------


def test_only_top_level_session_id_and_cwd_are_rewritten_in_place() -> None:
    line = (
        b'{"parentUuid":null, "cwd" : "/old/app/sub","sessionId":"S1","message":{"content":'
        b'[{"type":"tool_use","input":{"cwd":"/old/app","sessionId":"S1","q":"a \\"cwd\\":\\"x"}}]},'
        b'"n":1.50,"t":"\xc3\xa9"}\n'
    )
    spans = top_level_spans(line)
    assert set(spans) == {"parentUuid", "cwd", "sessionId", "message", "n", "t"}
    assert line[slice(*spans["n"])] == b"1.50" and line[slice(*spans["cwd"])] == b'"/old/app/sub"'
    out, report = rewrite_for_resume(line, session_id="S2", cwd_from="/old/app", cwd_to="/new/wt")
    assert out == line.replace(b'"/old/app/sub","sessionId":"S1"', b'"/new/wt/sub","sessionId":"S2"')
    assert report.dropped_thinking == 0


def _line(**fields: object) -> bytes:
    return json.dumps(fields, separators=(",", ":")).encode() + b"\n"


def _assistant(uuid: str, parent: str | None, *blocks: dict) -> bytes:
    message = {"role": "assistant", "content": list(blocks)}
    return _line(type="assistant", uuid=uuid, parentUuid=parent, sessionId="S", message=message)


def test_dropped_thinking_lines_are_bridged_and_slimmed_images_become_notes() -> None:
    thinking = {"type": "thinking", "thinking": "key [REDACTED:github]", "signature": "sig"}
    slimmed = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "[slimmed]",
                                           "slimmed": True, "original_size": 12288}}  # fmt: skip
    raw = b"".join(
        [
            _line(
                type="user",
                uuid="u1",
                parentUuid=None,
                sessionId="S",
                message={"role": "user", "content": [{"type": "text", "text": "look"}, slimmed]},
            ),
            _assistant("a1", "u1", thinking),
            _assistant("a2", "a1", dict(thinking, thinking="more [REDACTED:aws]")),
            _assistant("a3", "a2", {"type": "text", "text": "ok"}),
            _line(type="summary", summary="t", leafUuid="a2"),
            _assistant("a4", "a3", {"type": "thinking", "thinking": "clean", "signature": "s"}, thinking),
        ]
    )
    out, report = rewrite_for_resume(raw, session_id="S")
    lines = [json.loads(line) for line in out.splitlines()]
    assert [r.get("uuid") for r in lines] == ["u1", "a3", None, "a4"]
    assert lines[1]["parentUuid"] == "u1" and lines[2]["leafUuid"] == "u1"
    assert lines[0]["message"]["content"][1] == {
        "type": "text",
        "text": "[image not kept by Sessionledger: image/png, 12288 bytes]",
    }
    assert lines[3]["message"]["content"] == [{"type": "thinking", "thinking": "clean", "signature": "s"}]
    assert (report.dropped_thinking, report.dropped_lines, report.images) == (3, 2, 1)
    assert out.splitlines()[1] == raw.splitlines()[3].replace(b'"parentUuid":"a2"', b'"parentUuid":"u1"')

    known_unchanged, _ = rewrite_for_resume(raw, session_id="S", changed=lambda index: False)
    assert len(known_unchanged.splitlines()) == len(raw.splitlines())  # the local record says: not redacted


def test_changed_lines_are_found_in_a_cut_that_left_lines_out(monkeypatch) -> None:
    from sessionledger import queue
    from sessionledger.commands.agentsessions import AgentSession, Segment, changed_lines

    raw = b"".join(_line(type="x", n=i) for i in range(6))
    segment = Segment({"start_offset": 0, "end_offset": 99}, 0, len(raw))
    agent = AgentSession("A", {}, raw, [segment], [])
    record = {
        "intent": {"agent_session_id": "A", "kind": "checkpoint", "start_offset": 0, "end_offset": 99},
        "local": {"changed_lines": {"transcript": [3]}},
    }
    monkeypatch.setattr(queue, "sent", lambda limit=10: [record])
    cut = b"".join(line for i, line in enumerate(raw.splitlines(keepends=True)) if i != 1)  # line 1 left out
    assert [changed_lines(agent)(i) for i in range(6)] == [False, False, False, True, False, False]
    assert [changed_lines(agent, cut)(i) for i in range(5)] == [False, False, True, False, False]

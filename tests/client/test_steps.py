"""Fork and rewind at the granularity people think in: an autonomous session has one human turn
and several commits, and every commit, prompt and tool call is a step (docs/client.md "Steps")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sessionledger.core.formats import cut_at_offset, encode_project_dir, step_line_end
from tests.client.conftest import ClaudeSession, expected_upload, git, head
from tests.client.test_fork import new_session_id, stitched_end, undo_rewrite

pytestmark = pytest.mark.django_db(transaction=True)


def autonomous(claude: ClaudeSession, repo: Path) -> dict[str, str]:
    """One prompt; the assistant writes and commits three modules, running the tests between."""
    b = claude.builder
    made = {"base": head(repo)}
    b.prompt("Build the parser, the lexer and the printer; commit each")
    claude.flush()
    for name in ("parser", "lexer", "printer"):
        (repo / f"{name}.py").write_text(f"{name.upper()} = 1\n")
        claude.bash(f"git add -A && git commit -q -m 'Add {name}'")
        made[name] = head(repo)
        claude.bash("ls")  # a tool call that commits nothing: a step whose code is the commit before it
    b.new_response().assistant_text("All three are in.").turn_end()
    claude.flush()
    claude.end()
    return made


def forked_file(result, tmp_path: Path, worktree: Path) -> tuple[str, bytes]:
    new_id = new_session_id(result.stdout)
    path = tmp_path / "claude-config" / "projects" / encode_project_dir(str(worktree)) / f"{new_id}.jsonl"
    return new_id, path.read_bytes()


def fork(client_env, repo: Path, tmp_path: Path, name: str, *args: str):
    worktree = tmp_path / name
    result = client_env.cli(
        "fork", *args, "--worktree", str(worktree), cwd=repo, CLAUDE_CONFIG_DIR=str(tmp_path / "claude-config")
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result, worktree


def test_turns_lists_each_commit_inside_the_turn_and_with_steps_each_tool_call(ledger, repo, claude, client_env):
    made = autonomous(claude, repo)

    plain = client_env.cli("turns", "--list", cwd=repo)
    detailed = client_env.cli("turns", "--list", "--steps", cwd=repo)
    raw_json = client_env.cli("turns", "--json", "--steps", cwd=repo)
    assert raw_json.returncode == 0, raw_json.stderr
    as_json = json.loads(raw_json.stdout)

    assert "1 turns, 3 commits" in plain.stdout
    for name in ("parser", "lexer", "printer"):
        assert re.search(rf"^  {made[name][:10]} .* commit: Add {name}$", plain.stdout, re.M), plain.stdout
    assert "Bash: ls" not in plain.stdout and detailed.stdout.count("Bash: ls") == 3
    steps = as_json[0]["steps"]
    assert [s["kind"] for s in steps] == ["prompt"] + ["tool", "commit", "tool"] * 3
    tools = [s for s in steps if s["kind"] == "tool" and s["label"] == "Bash: ls"]
    assert [t["code"] for t in tools] == [made["parser"], made["lexer"], made["printer"]]


def test_fork_at_a_commit_inside_an_autonomous_turn_lands_on_that_commit(ledger, repo, claude, client_env, tmp_path):
    made = autonomous(claude, repo)
    result, worktree = fork(client_env, repo, tmp_path, "at-lexer", made["lexer"][:7])

    assert head(worktree) == made["lexer"]  # not the printer, two commits later
    new_id, data = forked_file(result, tmp_path, worktree)
    expected = cut_at_offset(expected_upload(claude.content()), stitched_end(ledger, claude.session_id, made["lexer"]))
    assert undo_rewrite(data, new_id, claude.session_id, worktree, repo) == expected
    assert b"Add lexer" in data and b"Add printer" not in data


def test_fork_at_a_tool_call_takes_the_code_of_the_commit_before_it(ledger, repo, claude, client_env, tmp_path):
    made = autonomous(claude, repo)
    steps = json.loads(client_env.cli("turns", "--json", "--steps", cwd=repo).stdout)[0]["steps"]
    second_ls = [s for s in steps if s["label"] == "Bash: ls"][1]

    result, worktree = fork(client_env, repo, tmp_path, "at-ls", claude.session_id, "--at", second_ls["step"][:8])

    assert head(worktree) == made["lexer"] != made["printer"]
    _, data = forked_file(result, tmp_path, worktree)
    assert data.count(b'"name":"Bash"') == 4  # parser commit, ls, lexer commit, ls
    assert second_ls["step"].encode() in data.rstrip(b"\n").rsplit(b"\n", 2)[-2]  # the call, then its result


def test_fork_at_a_prompt_keeps_the_prompt_and_the_code_before_it(ledger, repo, claude, client_env, tmp_path):
    made = autonomous(claude, repo)
    prompt = json.loads(client_env.cli("turns", "--json", "--steps", cwd=repo).stdout)[0]["steps"][0]

    result, worktree = fork(client_env, repo, tmp_path, "at-prompt", claude.session_id, "--at", prompt["step"])

    assert head(worktree) == made["base"]
    _, data = forked_file(result, tmp_path, worktree)
    last = json.loads(data.rstrip(b"\n").rsplit(b"\n", 1)[-1])
    assert last["uuid"] == prompt["step"] and "Build the parser" in json.dumps(last)


def test_rewind_to_a_step_puts_back_the_code_of_the_commit_captured_there(ledger, repo, claude, client_env):
    made = autonomous(claude, repo)

    result = client_env.cli("rewind", "--at", made["parser"][:8], cwd=repo)

    assert result.returncode == 0, result.stdout + result.stderr
    assert (repo / "parser.py").exists() and not (repo / "lexer.py").exists()
    assert head(repo) == made["printer"]  # HEAD stays: the rewind is staged changes
    assert git(repo, "diff", "--staged", "--name-only").split() == ["lexer.py", "printer.py"]


def test_an_unknown_step_says_what_a_step_is(ledger, repo, claude, client_env, tmp_path) -> None:
    autonomous(claude, repo)
    result = client_env.cli(
        "fork", claude.session_id, "--at", "deadbeefcafe", "--worktree", str(tmp_path / "x"), cwd=repo
    )
    assert result.returncode == 1
    assert "no step 'deadbeefcafe'" in result.stderr and "turns --steps" in result.stderr


# --- the server's `until` ---------------------------------------------------------------------------


def test_the_transcript_is_cut_after_a_message_or_a_commit_like_the_client_cuts(ledger, repo, claude) -> None:
    made = autonomous(claude, repo)
    base = f"/api/v1/projects/{ledger.slug}/agent-sessions/{claude.session_id}/transcript"
    stitched = ledger.api.get(base).content
    lexer_end = stitched_end(ledger, claude.session_id, made["lexer"])
    prompt_uuid = json.loads(stitched.split(b"\n")[0])["uuid"]

    by_commit = ledger.api.get(base, {"until": made["lexer"][:9]})
    by_message = ledger.api.get(base, {"until": prompt_uuid})

    assert by_commit.status_code == 200 and by_commit.content == cut_at_offset(stitched, lexer_end)
    assert by_message.content == stitched[: step_line_end(stitched, prompt_uuid)]


@pytest.mark.parametrize(
    ("params", "status", "field"),
    [
        ({"until": "not-a-step"}, 400, "until"),
        ({"until": "12345"}, 400, "until"),
        ({"until": "00000000-0000-4000-8000-000000000000"}, 404, "until"),
        ({"until": "abcdef1234"}, 404, "until"),
        ({"until": "abcdef1234", "until_turn": "1"}, 400, "until"),
    ],
)
def test_a_bad_or_unknown_step_is_a_json_error(ledger, repo, claude, params, status, field) -> None:
    autonomous(claude, repo)
    base = f"/api/v1/projects/{ledger.slug}/agent-sessions/{claude.session_id}/transcript"
    response = ledger.api.get(base, params)
    assert response.status_code == status
    assert response.json()["error"]["field"] == field


def test_an_outsider_cannot_cut_someone_elses_transcript(ledger, repo, claude, api_as, world) -> None:
    made = autonomous(claude, repo)
    base = f"/api/v1/projects/{ledger.slug}/agent-sessions/{claude.session_id}/transcript"
    assert api_as(world.outsider).get(base, {"until": made["lexer"]}).status_code == 404


def test_the_openapi_schema_documents_until_and_part(ledger) -> None:
    schema = ledger.api.get("/api/v1/schema", HTTP_ACCEPT="application/json").content.decode()
    assert '"until"' in schema and "cut after this step" in schema and '"part"' in schema

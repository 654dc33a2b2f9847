"""`init` and `status` against Claude Code as it runs hooks: commands from the settings files,
through `sh -c`, in the environment Claude Code was started in (docs/client.md "Hooks that never
hurt a teammate", "status")."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from django.utils import timezone
from django_scopes import scopes_disabled

from projects.models import ApiToken
from tests.client.conftest import ClaudeSession, ClientEnv, SettingsHooks, git, head, make_repo

pytestmark = pytest.mark.django_db(transaction=True)

BARE_PATH = "/usr/local/bin:/usr/bin:/bin"  # a PATH without any sessionledger on it

LAUNCHER = Path(__file__).resolve().parents[2] / "client" / "sessionledger" / "hook_entry.py"


def client_on_path(tmp_path: Path) -> str:
    """A PATH whose `sessionledger` is this client (a console-script-like shim)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "sessionledger"
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} -m sessionledger "$@"\n')
    shim.chmod(0o755)
    return f"{bin_dir}:{BARE_PATH}"


def commit(claude: ClaudeSession, repo: Path, name: str) -> str:
    claude.prompt(f"add {name}")
    (repo / name).write_text(f"{name}\n")
    claude.bash(f"git add -A && git commit -q -m 'Add {name}'")
    return head(repo)


def test_init_installs_personal_hooks_that_reach_this_client_without_it_on_path(ledger, repo, client_env) -> None:
    result = client_env.cli("init", cwd=repo)
    claude = ClaudeSession(client_env, repo, hooks=SettingsHooks(client_env, repo, PATH=BARE_PATH))
    sha = commit(claude, repo, "a.py")

    local = json.loads((repo / ".claude" / "settings.local.json").read_text())
    command = local["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
    assert command == f"{sys.executable} -I -S {LAUNCHER} hook post-tool-use"  # no console-script wrapper
    assert local["hooks"]["PostToolUseFailure"][0]["matcher"] == "Bash"
    assert not (repo / ".claude" / "settings.json").exists()
    assert "for you alone; not committed" in result.stdout and "absolute path" in result.stdout
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""  # kept out of git
    assert [r.returncode for r in claude.fired] == [0]
    assert ledger.wait_for(lambda: ledger.sessions(commit_hash=sha))


def test_team_hooks_cost_a_teammate_without_the_client_nothing(repo, client_env, tmp_path) -> None:
    result = client_env.cli("init", "--team", cwd=repo)
    teammate = ClientEnv(tmp_path / "teammate")
    claude = ClaudeSession(teammate, repo, hooks=SettingsHooks(teammate, repo, PATH=BARE_PATH))

    commit(claude, repo, "a.py")
    failed = claude.bash("git commit -q -m nothing-staged")
    started = claude.start()
    ended = claude.end()

    team = json.loads((repo / ".claude" / "settings.json").read_text())
    assert "exits 0 silently" in result.stdout
    commands = [h["hooks"][0]["command"] for h in team["hooks"]["PostToolUse"]]
    assert all(c.startswith("if command -v sessionledger ") for c in commands)
    assert failed.returncode != 0
    for run in [*claude.fired, *started, *ended]:
        assert (run.returncode, run.stdout, run.stderr) == (0, b"", b"")
    assert not teammate.state_dir.exists()


def test_team_hooks_capture_with_a_client_on_path_and_step_aside_for_personal_hooks(
    ledger, repo, client_env, tmp_path
) -> None:
    path = client_on_path(tmp_path)
    client_env.cli("init", "--team", cwd=repo)
    claude = ClaudeSession(client_env, repo, hooks=SettingsHooks(client_env, repo, PATH=path))
    first = commit(claude, repo, "a.py")
    assert ledger.wait_for(lambda: ledger.sessions(commit_hash=first))

    client_env.cli("init", cwd=repo)  # personal hooks too: both files now name our hooks
    status = client_env.cli("status", cwd=repo, PATH=path)
    second = commit(claude, repo, "b.py")

    assert "(team): reaches a client, which leaves the work to your personal hooks" in status.stdout
    assert "(personal): reach sessionledger" in status.stdout
    assert [r.returncode for r in claude.fired] == [0, 0]
    assert ledger.wait_for(lambda: ledger.sessions(commit_hash=second))
    assert client_env.log().count("queued checkpoint") == 2


def test_init_guards_hooks_an_older_init_committed_bare(repo, client_env, tmp_path) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    bare = {"type": "command", "command": "sessionledger hook post-tool-use", "timeout": 30}
    settings.write_text(json.dumps({"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [bare]}]}}))

    result = client_env.cli("init", cwd=repo)
    (repo / ".claude" / "settings.local.json").unlink()  # a teammate's clone has only the committed file
    teammate = ClientEnv(tmp_path / "teammate")
    runs = SettingsHooks(teammate, repo, PATH=BARE_PATH).fire("PostToolUse", {"tool_name": "Bash"}, "Bash")

    assert "Guarded 1 unguarded sessionledger hook" in result.stdout
    committed = json.loads(settings.read_text())["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
    assert committed.startswith("if command -v sessionledger") and committed.endswith("--via team; fi")
    assert [(r.returncode, r.stderr) for r in runs] == [(0, b"")]  # was: `sh: sessionledger: not found`, 127


def test_init_leaves_out_the_failure_hook_for_a_claude_code_that_predates_it(repo, client_env, tmp_path) -> None:
    bin_dir = tmp_path / "old-claude"
    bin_dir.mkdir()
    (bin_dir / "claude").write_text("#!/bin/sh\necho '2.1.39 (Claude Code)'\n")
    (bin_dir / "claude").chmod(0o755)

    result = client_env.cli("init", cwd=repo, PATH=f"{bin_dir}:{BARE_PATH}")

    hooks = json.loads((repo / ".claude" / "settings.local.json").read_text())["hooks"]
    assert "PostToolUseFailure" not in hooks and "PostToolUse" in hooks
    assert "2.1.39 predates PostToolUseFailure" in result.stdout


def test_a_commit_followed_by_a_failing_command_is_captured_at_the_failure_hook(ledger, repo, client_env) -> None:
    client_env.cli("init", cwd=repo)
    claude = ClaudeSession(client_env, repo, hooks=SettingsHooks(client_env, repo, PATH=BARE_PATH))
    claude.prompt("commit, then lint")
    (repo / "a.py").write_text("A = 1\n")

    run = claude.bash("git add -A && git commit -q -m 'Add a' && false")

    assert run.returncode == 1
    assert [r.returncode for r in claude.fired] == [0]
    session = ledger.wait_for(lambda: ledger.sessions(commit_hash=head(repo)))
    assert session[0].kind == "checkpoint"


# --- status -------------------------------------------------------------------------------------


def test_status_check_passes_when_capture_works(ledger, repo, client_env) -> None:
    client_env.cli("init", cwd=repo)
    result = client_env.cli("status", "--check", cwd=repo, PATH=BARE_PATH)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "token accepted" in result.stdout
    assert "Project:  acme-api (the git remote)" in result.stdout
    assert f"reach sessionledger 0.1.0 ({sys.executable})" in result.stdout
    assert "Capture:  works" in result.stdout


def test_status_runs_the_hooks_and_reports_a_command_that_is_not_found(ledger, repo, client_env) -> None:
    client_env.cli("init", cwd=repo)
    local = repo / ".claude" / "settings.local.json"
    gone = "/opt/old-venv/bin/python"  # the venv init ran from was deleted
    local.write_text(local.read_text().replace(sys.executable, gone))

    result = client_env.cli("status", "--check", cwd=repo, PATH=BARE_PATH)

    assert result.returncode == 1
    assert "not found (exit 127)" in result.stdout
    assert "Capture would not work: no hook reaches a client" in result.stderr


def test_status_with_only_team_hooks_and_no_client_on_path_says_capture_is_off(ledger, repo, client_env) -> None:
    client_env.cli("init", "--team", cwd=repo)
    result = client_env.cli("status", "--check", "--json", cwd=repo, PATH=BARE_PATH)
    report = json.loads(result.stdout)
    assert result.returncode == 1
    assert report["hooks"][0]["scope"] == "team" and report["hooks"][0]["works"] is False
    assert "guard found no `sessionledger` on PATH" in report["hooks"][0]["problem"]


@pytest.mark.parametrize("field", ["revoked_at", "expires_at"])
def test_status_says_a_revoked_or_expired_token_is_refused(ledger, repo, client_env, world, field) -> None:
    client_env.cli("init", cwd=repo)
    with scopes_disabled():
        ApiToken.objects.filter(user=world.member).update(**{field: timezone.now() - timezone.timedelta(minutes=1)})

    result = client_env.cli("status", "--check", cwd=repo, PATH=BARE_PATH)

    word = "revoked" if field == "revoked_at" else "expired"
    assert result.returncode == 1
    assert f"token refused by the server: This token has {'been ' if word == 'revoked' else ''}{word}" in result.stdout
    assert "(logged in)" not in result.stdout and "token accepted" not in result.stdout


def test_status_check_fails_without_a_token_and_without_a_project(repo, client_env, tmp_path) -> None:
    bare_repo = make_repo(tmp_path / "scratch", client_env, remote=None)
    client_env.cli("init", cwd=bare_repo)

    result = client_env.cli("status", "--check", cwd=bare_repo, PATH=BARE_PATH, SESSIONLEDGER_SERVER="http://x")

    assert result.returncode == 1
    assert "not logged in" in result.stderr and "project unresolved" in result.stderr
    assert "init --project" in result.stderr


# --- init --project without a remote ------------------------------------------------------------


def test_init_project_pins_a_repository_without_a_remote_and_releases_blocked_segments(
    ledger, client_env, tmp_path
) -> None:
    scratch = make_repo(tmp_path / "scratch", client_env, remote=None)
    client_env.cli("init", cwd=scratch)
    claude = ClaudeSession(client_env, scratch, hooks=SettingsHooks(client_env, scratch, PATH=BARE_PATH))
    first = commit(claude, scratch, "a.py")
    blocked = client_env.cli("sync", cwd=scratch)
    assert "init --project SLUG" in blocked.stdout and blocked.returncode == 1

    pinned = client_env.cli("init", "--project", "acme-api", cwd=scratch)
    second = commit(claude, scratch, "b.py")

    assert "pinned in its git config" in pinned.stdout
    assert git(scratch, "config", "--get", "sessionledger.project") == "acme-api"
    assert ledger.wait_for(lambda: ledger.sessions(commit_hash=first) and ledger.sessions(commit_hash=second))
    status = client_env.cli("status", "--check", cwd=scratch, PATH=BARE_PATH)
    assert status.returncode == 0 and "pinned in this repository's git config" in status.stdout
    assert os.path.exists(scratch / ".git" / "config")

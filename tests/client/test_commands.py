"""The commands a developer types: init, login, status, list, show, capture, task."""

from __future__ import annotations

import json
import re
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django_scopes import scopes_disabled

from projects import device
from projects.models import DeviceGrant
from tests.client.conftest import expected_upload, head
from tests.e2e.conftest import wait_for_status

pytestmark = pytest.mark.django_db(transaction=True)

EXISTING = {
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "PostToolUse": [
            {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "prettier --write", "timeout": 10}]},
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit.sh"}]},
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}

LAUNCHER = Path(__file__).resolve().parents[2] / "client" / "sessionledger" / "hook_entry.py"


GUARDED = "if command -v sessionledger >/dev/null 2>&1; then exec sessionledger hook {} --via team; fi"


def test_init_merges_into_existing_settings_without_clobbering_and_is_idempotent(repo, client_env) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(EXISTING, indent=2))

    first = client_env.cli("init", "--team", cwd=repo)
    after_first = settings.read_bytes()
    second = client_env.cli("init", "--team", cwd=repo)

    assert first.returncode == 0 and "Installed guarded hooks" in first.stdout
    assert second.returncode == 0 and "Already installed" in second.stdout
    assert settings.read_bytes() == after_first
    merged = json.loads(after_first)
    assert merged["permissions"] == EXISTING["permissions"]
    assert merged["hooks"]["Stop"] == EXISTING["hooks"]["Stop"]
    post = merged["hooks"]["PostToolUse"]
    assert post[:2] == EXISTING["hooks"]["PostToolUse"]
    assert post[2] == {
        "matcher": "Bash",
        "hooks": [{"type": "command", "command": GUARDED.format("post-tool-use"), "timeout": 30}],
    }
    assert merged["hooks"]["SessionEnd"] == [
        {"hooks": [{"type": "command", "command": GUARDED.format("session-end"), "timeout": 30}]}
    ]


@pytest.mark.parametrize("name", ["settings.json", "settings.local.json"])
def test_init_refuses_a_settings_file_that_is_not_json(repo, client_env, name) -> None:
    settings = repo / ".claude" / name
    settings.parent.mkdir()
    settings.write_text("{ not json")
    result = client_env.cli("init", *(["--team"] if name == "settings.json" else []), cwd=repo)
    assert result.returncode == 1 and "not valid JSON" in result.stderr
    assert settings.read_text() == "{ not json"


def test_init_global_writes_the_users_settings(client_env, tmp_path) -> None:
    result = client_env.cli("init", "--global", cwd=tmp_path)
    settings = json.loads((client_env.home / ".claude" / "settings.json").read_text())
    assert result.returncode == 0
    command = settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
    assert command == f"{sys.executable} -I -S {LAUNCHER} hook post-tool-use"  # no console-script wrapper


def test_init_binds_the_repository_to_its_project_through_the_api(ledger, repo, client_env) -> None:
    result = client_env.cli("init", "--local", cwd=repo)
    config = json.loads((client_env.config_dir / "config.json").read_text())
    assert "github.com/acme/acme-api → project acme-api" in result.stdout
    assert config["repos"] == {"github.com/acme/acme-api": "acme-api"}
    assert (repo / ".claude" / "settings.local.json").exists()


def test_login_with_a_token_saves_it_privately_after_checking_it(ledger, client_env) -> None:
    result = client_env.cli("login", "--server", ledger.url, "--token", ledger.token, SESSIONLEDGER_TOKEN=None)
    path = client_env.config_dir / "config.json"
    assert result.returncode == 0, result.stderr
    assert json.loads(path.read_text()) == {"server": ledger.url, "token": ledger.token}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    refused = client_env.cli("login", "--server", ledger.url, "--token", "slp_wrong", SESSIONLEDGER_TOKEN=None)
    assert refused.returncode == 1 and "Invalid token" in refused.stderr
    assert json.loads(path.read_text())["token"] == ledger.token


def test_login_through_the_browser_device_flow(ledger, client_env, world) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "sessionledger", "login", "--server", ledger.url, "--no-browser"],
        env=client_env.env(SESSIONLEDGER_TOKEN=None),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    code = re.search(r"code ([A-Z]{4}-[A-Z]{4})", process.stdout.readline() + process.stdout.readline())
    assert code, "the login prints the code to confirm"
    with scopes_disabled():
        grant = device.device_grant_for_user_code(code.group(1))
        device.device_decide(grant=grant, user=world.admin, approve=True)
    _out, err = process.communicate(timeout=60)

    assert process.returncode == 0, err
    token = json.loads((client_env.config_dir / "config.json").read_text())["token"]
    listed = client_env.cli("list", "--project", "acme-api", SESSIONLEDGER_TOKEN=None)
    assert token.startswith("slp_") and listed.returncode == 0


def test_a_denied_device_login_fails_clearly(ledger, client_env) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "sessionledger", "login", "--server", ledger.url, "--no-browser"],
        env=client_env.env(SESSIONLEDGER_TOKEN=None),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    process.stdout.readline()
    with scopes_disabled():
        grant = ledger.wait_for(lambda: DeviceGrant.objects.order_by("-pk").first())
        grant.denied_at = grant.expires_at
        grant.save(update_fields=["denied_at"])
    _, err = process.communicate(timeout=60)
    assert process.returncode == 1 and "denied" in err


def test_list_and_show_query_the_api(ledger, repo, claude, client_env) -> None:
    claude.prompt("Add the parser module")
    (repo / "parser.py").write_text("def parse(): ...\n")
    claude.bash("git add -A && git commit -q -m 'Add parser'")
    sha = head(repo)

    listed = client_env.cli("list", cwd=repo)
    as_json = json.loads(client_env.cli("list", "--json", "--kind", "checkpoint", cwd=repo).stdout)
    shown = client_env.cli("show", sha[:8], cwd=repo)
    by_id = json.loads(client_env.cli("show", as_json["results"][0]["id"], "--json", cwd=repo).stdout)

    assert listed.returncode == 0 and sha[:10] in listed.stdout and "checkpoint" in listed.stdout
    assert [s["commit_hash"] for s in as_json["results"]] == [sha]
    assert shown.returncode == 0 and sha in shown.stdout and "Open     http://testserver/p/acme-api/s/" in shown.stdout
    assert by_id["commit_hash"] == sha and by_id["links"]["raw"].endswith("/raw")
    missing = client_env.cli("show", "0000000", cwd=repo)
    assert missing.returncode == 1 and "no session for commit 0000000" in missing.stderr


def test_status_json_reports_config_sources_hooks_queue_and_recent(ledger, repo, claude, client_env) -> None:
    client_env.cli("init", cwd=repo)
    claude.prompt("go")
    (repo / "a.py").write_text("a = 1\n")
    claude.bash("git add -A && git commit -q -m 'Add a'")

    report = json.loads(client_env.cli("status", "--json", "--check", cwd=repo).stdout)

    assert report["sources"]["server"] == "SESSIONLEDGER_SERVER" and report["config"]["token"].endswith("…")
    assert report["login"] == {"server": ledger.url, "token": True, "verified": True, "projects": ["acme-api"]}
    assert [(h["scope"], h["works"]) for h in report["hooks"]] == [("personal", True)]
    assert report["problems"] == []
    assert report["queue"] == [] and report["recent"][0]["what"] == f"checkpoint {head(repo)[:10]}"


def test_manual_capture_links_the_segment_to_head(ledger, repo, claude, client_env) -> None:
    claude.prompt("think about the design, no code yet")
    result = client_env.cli("capture", "--transcript", str(claude.path), cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Uploaded: http://testserver/p/acme-api/s/" in result.stdout
    [manual] = ledger.sessions(kind="manual")
    assert manual.commit_hash == head(repo) and ledger.raw(manual) == expected_upload(claude.content())
    again = client_env.cli("capture", "--transcript", str(claude.path), cwd=repo)
    assert "Nothing new to capture" in again.stdout


def test_capture_with_commit_finds_the_current_transcript_of_the_directory(ledger, repo, claude, client_env) -> None:
    claude.prompt("I committed this in my own terminal")
    result = client_env.cli("capture", "--commit", "HEAD", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert ledger.session_for(head(repo)).agent_session_id == claude.session_id


def test_task_start_and_finish_capture_the_task_with_its_status(ledger, repo, claude, client_env) -> None:
    claude.prompt("before the task")
    started = client_env.cli("task", "start", "SL-7", "--session", claude.session_id, cwd=repo)
    mark = len(claude.content())
    claude.prompt("do SL-7")
    time.sleep(0.01)
    finished = client_env.cli(
        "task", "finish", "SL-7", "--status", "abandoned", "--session", claude.session_id, cwd=repo
    )

    assert started.returncode == 0 and finished.returncode == 0, finished.stdout + finished.stderr
    [task] = ledger.sessions(kind="task")
    assert (task.task_id, task.requested_status) == ("SL-7", "abandoned")
    assert (task.start_offset, task.end_offset) == (mark, len(claude.content()))


@pytest.mark.e2e
def test_a_captured_session_is_processed_by_the_worker(ledger, repo, claude, start_worker) -> None:
    start_worker()
    claude.prompt("Please add the greeting module")
    (repo / "greet.py").write_text("def hello(): return 'hi'\n")
    claude.bash("git add -A && git commit -q -m 'Add greeting'")

    session = wait_for_status(str(ledger.session_for(head(repo)).pk))
    assert session.status == "complete", session.error
    assert session.title == "Please add the greeting module" and session.turn_count == 1


def test_init_refuses_a_project_the_server_does_not_know_and_pins_nothing(ledger, repo, client_env) -> None:
    refused = client_env.cli("init", "--project", "no-such-project", cwd=repo)
    known = client_env.cli("init", "--project", ledger.slug, cwd=repo)

    assert refused.returncode == 1
    assert "has no project no-such-project that you are a member of: nothing pinned" in refused.stderr
    assert known.returncode == 0 and "Warning" not in known.stdout
    assert (
        subprocess.run(
            ["git", "config", "--local", "sessionledger.project"], cwd=repo, capture_output=True, text=True
        ).stdout.strip()
        == ledger.slug
    )

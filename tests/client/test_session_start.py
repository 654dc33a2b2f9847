"""SessionStart as every session sees it: short, useful, per repository, and never slow
(docs/client.md "SessionStart")."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.client.conftest import ClaudeSession, SettingsHooks
from tests.client.test_context_hooks import (
    context_of,
    history,  # noqa: F401 - a fixture these tests share
    start,
)

pytestmark = pytest.mark.django_db(transaction=True)


def start_against(env, repo: Path, server: str) -> subprocess.CompletedProcess:
    """SessionStart against `server` with the default deadline."""
    return start(
        env,
        repo,
        "startup",
        SESSIONLEDGER_SERVER=server,
        SESSIONLEDGER_TOKEN="sl_x",
        SESSIONLEDGER_PROJECT="acme-api",
        SESSIONLEDGER_CONTEXT_TIMEOUT=None,  # the default deadline
    )


@pytest.mark.usefixtures("history")
def test_the_default_digest_is_short_and_holds_no_teammates_prompts(ledger, repo, client_env, world) -> None:
    text = context_of(start(client_env, repo, "startup"))

    assert len(text) <= 2000
    assert "Commit: Add session capture" in text and "Files: CHANGES.md" in text
    assert "Title: update the changelog" in text
    assert "\n- " not in text and "Assistant's last words" not in text
    assert "Prompts are the developers' own words" not in text


@pytest.mark.usefixtures("history")
def test_prompts_and_budget_are_set_per_repository(ledger, repo, client_env, tmp_path) -> None:
    assert client_env.cli("config", "set", "--repo", "context_prompts", "true", cwd=repo).returncode == 0
    assert client_env.cli("config", "set", "--repo", "context_budget", "600", cwd=repo).returncode == 0
    other = tmp_path / "other"
    other.mkdir()
    subprocess.run(["git", "init", "-q", str(other)], check=True)

    here = context_of(start(client_env, repo, "startup"))
    elsewhere = context_of(start(client_env, other, "startup", SESSIONLEDGER_PROJECT="acme-api"))
    shown = client_env.cli("config", "get", "context_prompts", cwd=repo).stdout

    assert "\n- " in here and len(here) <= 600
    assert "\n- " not in elsewhere and len(elsewhere) > 600
    assert shown.startswith("true\n(from git config sessionledger.context-prompts")
    assert "context-prompts = true" in (repo / ".git" / "config").read_text()


def test_a_hanging_server_does_not_hold_session_start(repo, client_env) -> None:
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        result = start_against(client_env, repo, f"http://127.0.0.1:{silent.getsockname()[1]}")

    # It gave up at its own deadline (its log says so) and started the session without a digest; how
    # long that deadline is, is the hook's setting (docs/client.md), and its cost is in bench/bench_session_hooks.py.
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert "did not answer in time" in client_env.log()


def test_a_server_that_trickles_its_answer_is_cut_off_at_the_deadline(repo, client_env) -> None:
    """The hook's request is cut when the hook exits at its deadline. The detached refresh it starts
    for the next session connects too (and waits longer): each connection is answered on its own,
    and the test looks for the one whose reader went away mid-answer."""
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(60)  # the accept below, should the hook never connect

    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"x" * 100
    cut: list[int] = []  # bytes a connection had received when its reader closed it
    stop = threading.Event()

    def trickle(conn: socket.socket) -> None:  # a byte every 0.2 s: each read is quick, the whole never ends
        conn.recv(65536)
        for sent, byte in enumerate(answer):
            if stop.is_set():
                break
            try:
                conn.send(bytes([byte]))
            except OSError:
                cut.append(sent)
                break
            time.sleep(0.2)
        conn.close()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:  # closed, or nobody came (the listener's timeout)
                return
            threading.Thread(target=trickle, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    # A deadline a loaded machine's hook still connects within: at the default half second it may give
    # up before connecting, and only the detached refresh (which waits a minute) would be answered.
    server = f"http://127.0.0.1:{listener.getsockname()[1]}"
    result = start(
        client_env,
        repo,
        "startup",
        SESSIONLEDGER_SERVER=server,
        SESSIONLEDGER_TOKEN="sl_x",
        SESSIONLEDGER_PROJECT="acme-api",
        SESSIONLEDGER_CONTEXT_TIMEOUT="3",
    )
    deadline = time.monotonic() + 10  # the hook's exit closed its connection: a send fails soon after
    while not cut and time.monotonic() < deadline:
        time.sleep(0.1)
    stop.set()
    listener.close()

    assert (result.returncode, result.stdout) == (0, b"")
    assert "did not answer in time" in client_env.log()
    assert cut and 0 < cut[0] < len(answer)  # it asked and was answered, then cut off mid-answer


@pytest.mark.usefixtures("history")
def test_session_start_through_the_installed_hook_gives_the_digest_once(ledger, repo, client_env) -> None:
    client_env.cli("init", cwd=repo)
    client_env.cli("init", "--team", cwd=repo)
    claude = ClaudeSession(
        client_env, repo, hooks=SettingsHooks(client_env, repo, PATH=f"{Path(sys.executable).parent}:/usr/bin:/bin")
    )

    answers = [r for r in claude.start() if r.stdout.strip()]

    assert len(answers) == 1 and answers[0].returncode == 0
    context = json.loads(answers[0].stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("Sessionledger: earlier work in acme-api")


@pytest.mark.usefixtures("history")
def test_the_context_api_gives_the_short_digest_by_default_and_refuses_a_bad_flag(ledger) -> None:
    base = f"/api/v1/projects/{ledger.slug}/context"
    short = ledger.api.get(base, {"prompts": "0"})
    full = ledger.api.get(base, {"prompts": "1"})
    bad = ledger.api.get(base, {"prompts": "sometimes"})

    assert short.status_code == full.status_code == 200
    assert "\n- " not in short.json()["text"] and "\n- " in full.json()["text"]
    assert ledger.api.get(base).json()["text"] == short.json()["text"]  # teammates' prompts only on request
    assert len(short.json()["sessions"]) == len(full.json()["sessions"]) == 3
    assert bad.status_code == 400 and bad.json()["error"]["field"] == "prompts"

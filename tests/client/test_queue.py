"""Never block, never lose: the queue, the detached uploader, sync, concurrency, refusals."""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import subprocess
import sys
import threading
import time
from urllib.parse import urlsplit

import pytest
from django.utils import timezone
from django_scopes import scopes_disabled

from projects.models import ApiToken
from tests.client.conftest import ClaudeSession, expected_upload, git, head, make_repo

pytestmark = pytest.mark.django_db(transaction=True)


def commit(claude: ClaudeSession, name: str, **env: str | None) -> None:
    claude.prompt(f"add {name}")
    (claude.cwd / f"{name}.py").write_text(f"{name} = 1\n")
    claude.bash(f"git add -A && git commit -q -m 'Add {name}'", **env)


class Gate:
    """A TCP relay in front of the live server that holds every connection until it is opened."""

    def __init__(self, upstream: str) -> None:
        self.upstream = urlsplit(upstream)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.opened = threading.Event()
        self.held = 0  # connections that arrived while the gate was shut
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                downstream, _ = self.listener.accept()
            except OSError:
                return
            if not self.opened.is_set():
                self.held += 1
            threading.Thread(target=self._relay, args=(downstream,), daemon=True).start()

    def _relay(self, downstream: socket.socket) -> None:
        self.opened.wait()
        upstream = socket.create_connection((self.upstream.hostname, self.upstream.port))
        for source, sink in ((downstream, upstream), (upstream, downstream)):
            threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.opened.set()
        self.listener.close()


def test_the_detached_uploader_delivers_the_session_after_the_hook_has_exited(ledger, repo, claude) -> None:
    """The hook returns while its upload cannot finish: ordering, not time (no seconds asserted)."""
    gate = Gate(ledger.url)
    try:
        claude.prompt("add a")
        (repo / "a.py").write_text("a = 1\n")
        claude.bash(
            "git add -A && git commit -q -m 'Add a'", SESSIONLEDGER_UPLOAD_INLINE=None, SESSIONLEDGER_SERVER=gate.url
        )
        # The commit and its hook have returned, and the gate has let no byte through: the hook did not
        # wait for the upload. The uploader it left behind is the one holding a request at the gate.
        assert ledger.sessions(commit_hash=head(repo)) == []
        ledger.wait_for(lambda: gate.held)
        gate.opened.set()
        session = ledger.wait_for(lambda: ledger.sessions(commit_hash=head(repo)))[0]
        assert ledger.raw(session) == expected_upload(claude.content())
    finally:
        gate.close()


def test_server_down_keeps_the_segment_and_sync_uploads_it_exactly_once(
    ledger, repo, claude, client_env, dead_server
) -> None:
    commit(claude, "a", SESSIONLEDGER_SERVER=dead_server)
    [entry] = client_env.queue()
    status = client_env.status(entry)
    assert status["state"] == "pending" and status["attempts"] == 1 and "cannot reach" in status["reason"]
    shown = client_env.cli("status", cwd=repo, SESSIONLEDGER_SERVER=dead_server).stdout
    assert "1 segment waiting" in shown and "cannot reach" in shown

    synced = client_env.cli("sync", cwd=repo)
    again = client_env.cli("sync", cwd=repo)

    assert synced.returncode == 0, synced.stdout + synced.stderr
    assert "Uploaded 1 segment" in synced.stdout and "Queue is empty" in again.stdout
    [session] = ledger.sessions()
    assert session.commit_hash == head(repo) and ledger.raw(session) == expected_upload(claude.content())
    assert client_env.queue() == []


def test_sync_wait_reports_what_cannot_be_sent_now(ledger, repo, claude, client_env, dead_server) -> None:
    commit(claude, "a", SESSIONLEDGER_SERVER=dead_server)
    result = client_env.cli("sync", "--wait", "--timeout", "3", cwd=repo, SESSIONLEDGER_SERVER=dead_server)
    assert result.returncode == 1
    assert "1 segment still waiting" in result.stdout and "cannot reach" in result.stdout
    assert len(client_env.queue()) == 1


def test_ten_hooks_at_once_on_the_same_transcript_capture_the_commit_once(ledger, repo, claude, client_env) -> None:
    claude.prompt("add a")
    (repo / "a.py").write_text("a = 1\n")
    claude.bash("git add -A && git commit -q -m 'Add a'", hook=False)
    payload = json.dumps(claude.payload("git commit", {"stdout": "", "stderr": ""}, repo)).encode()
    hooks = [
        subprocess.Popen(
            [sys.executable, "-m", "sessionledger", "hook", "post-tool-use"],
            stdin=subprocess.PIPE,
            env=client_env.env(SESSIONLEDGER_UPLOAD_INLINE=None),
        )
        for _ in range(10)
    ]
    for process in hooks:
        process.communicate(payload, timeout=60)
        assert process.returncode == 0

    session = ledger.wait_for(lambda: ledger.sessions(commit_hash=head(repo)))[0]
    ledger.wait_for(lambda: client_env.queue() == [])
    assert len(ledger.sessions()) == 1
    assert ledger.raw(session) == expected_upload(claude.content())


def test_concurrent_hooks_across_many_commits_lose_and_duplicate_no_byte(ledger, repo, claude, client_env) -> None:
    for round_number in range(4):
        claude.prompt(f"round {round_number}")
        (repo / f"r{round_number}.py").write_text("x = 1\n")
        claude.bash(f"git add -A && git commit -q -m 'Round {round_number}'", hook=False)
        payload = json.dumps(claude.payload("git commit", {}, repo)).encode()
        hooks = [
            subprocess.Popen(
                [sys.executable, "-m", "sessionledger", "hook", "post-tool-use"],
                stdin=subprocess.PIPE,
                env=client_env.env(SESSIONLEDGER_UPLOAD_INLINE=None),
            )
            for _ in range(6)
        ]
        for process in hooks:
            process.communicate(payload, timeout=60)

    claude.prompt("and a last word")
    claude.end()
    client_env.cli("sync", "--wait", "--timeout", "60", cwd=repo)
    segments = sorted((s.start_offset, s.end_offset) for s in ledger.sessions())
    assert segments[0][0] == 0 and segments[-1][1] == len(claude.content())
    assert all(a[1] == b[0] for a, b in itertools.pairwise(segments))  # contiguous, no overlap
    assert len(ledger.sessions(kind="checkpoint")) == 4 and len(ledger.sessions(kind="end")) == 1


def test_an_expired_token_keeps_the_segment_and_status_says_why(ledger, repo, claude, client_env, world) -> None:
    with scopes_disabled():
        ApiToken.objects.filter(user=world.member).update(expires_at=timezone.now())
    commit(claude, "a")

    [entry] = client_env.queue()
    assert client_env.status(entry)["state"] == "auth"
    shown = client_env.cli("status", cwd=repo).stdout
    assert "login needed" in shown and "expired" in shown and "sessionledger login" in shown

    from tests.factories import make_token

    login = client_env.cli("login", "--token", make_token(world.member), cwd=repo, SESSIONLEDGER_TOKEN=None)
    assert login.returncode == 0, login.stderr
    assert client_env.cli("sync", cwd=repo, SESSIONLEDGER_TOKEN=None).returncode == 0
    assert len(ledger.sessions()) == 1 and client_env.queue() == []


def test_a_refused_upload_is_kept_as_rejected_with_the_servers_message(ledger, repo, claude, client_env) -> None:
    commit(claude, "a", SESSIONLEDGER_PROJECT="globex-web")  # not a member: 404 like a missing project

    [entry] = client_env.queue()
    status = client_env.status(entry)
    assert status["state"] == "rejected" and status["http_status"] == 404
    shown = client_env.cli("status", cwd=repo).stdout
    assert "rejected by the server: No such project." in shown
    assert client_env.cli("sync", cwd=repo).returncode == 1  # not retried unless asked
    assert client_env.status(entry)["attempts"] == status["attempts"]


def test_a_duplicate_of_an_uploaded_segment_is_removed_from_the_queue(ledger, repo, claude, client_env) -> None:
    commit(claude, "a")
    [record] = list((client_env.state_dir / "sent").iterdir())
    sent = json.loads(record.read_text())
    requeued = client_env.state_dir / "queue" / sent["id"]
    requeued.mkdir(parents=True)
    (requeued / "intent.json").write_text(json.dumps(sent["intent"]))

    result = client_env.cli("sync", cwd=repo)

    assert "already there" in result.stdout and client_env.queue() == []
    assert len(ledger.sessions()) == 1


def test_changed_lines_are_kept_locally_after_upload(ledger, repo, claude, client_env) -> None:
    claude.prompt("the key is sk-ant-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0")
    commit(claude, "a")
    [record] = list((client_env.state_dir / "sent").iterdir())
    local = json.loads(record.read_text())["local"]
    assert local["changed_lines"] == {"transcript": [0, 1]}
    assert json.loads(record.read_text())["metadata"]["redaction"] == {"anthropic": 2}


def test_a_new_repository_without_commits_then_its_first_commit(ledger, tmp_path, client_env) -> None:
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q", "-b", "main")
    git(fresh, "remote", "add", "origin", "git@github.com:acme/acme-api.git")
    claude = ClaudeSession(client_env, fresh)
    claude.prompt("start the project")
    claude.bash("ls")
    commit(claude, "first")
    assert ledger.session_for(head(fresh)).start_offset == 0


def test_two_repositories_each_get_their_own_observation(ledger, tmp_path, client_env) -> None:
    one, two = make_repo(tmp_path / "one", client_env), make_repo(tmp_path / "two", client_env)
    claude_one, claude_two = ClaudeSession(client_env, one), ClaudeSession(client_env, two)
    commit(claude_one, "a")
    commit(claude_two, "b")
    assert ledger.session_for(head(one)).agent_session_id == claude_one.session_id
    assert ledger.session_for(head(two)).agent_session_id == claude_two.session_id


def test_while_the_server_is_down_one_background_uploader_waits_to_retry(repo, claude, client_env, dead_server) -> None:
    from sessionledger.fsutil import is_locked

    env = {"SESSIONLEDGER_SERVER": dead_server, "SESSIONLEDGER_TOKEN": "slp_x", "SESSIONLEDGER_PROJECT": "acme-api"}
    env.update(SESSIONLEDGER_UPLOAD_INLINE=None, SESSIONLEDGER_UPLOADER_MAX_SECONDS="8")
    env.update(SESSIONLEDGER_RETRY_BASE_SECONDS="2")
    commit(claude, "a", **env)
    commit(claude, "b", **env)
    waiter = str(client_env.state_dir / "uploader.wait.lock")

    deadline = time.monotonic() + 10
    while not is_locked(waiter) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert is_locked(waiter), "a detached uploader waits for the next retry"
    assert len(client_env.queue()) == 2
    while is_locked(waiter) and time.monotonic() < deadline + 10:
        time.sleep(0.1)  # it gives up after uploader_max_seconds
    assert not is_locked(waiter)
    first, _second = client_env.queue()
    assert client_env.status(first)["attempts"] >= 1  # the second waits behind it: same server
    assert "cannot reach" in client_env.cli("status", **env).stdout


def test_an_intent_queued_by_an_older_client_still_uploads(ledger, repo, claude, client_env, world) -> None:
    with scopes_disabled():
        ApiToken.objects.filter(user=world.member).update(expires_at=timezone.now())
    commit(claude, "a")
    [entry] = client_env.queue()
    intent = json.loads((entry / "intent.json").read_text())
    # What the first clients wrote: no agent, version, cwd, project or sub-agents, and a key of a
    # client newer than this one, which must be carried through untouched.
    older = {k: intent[k] for k in ("kind", "agent_session_id", "transcript", "start_offset", "end_offset", "crc")}
    older |= {"commit_hash": intent["commit_hash"], "repo": intent["repo"], "captured_at": intent["captured_at"]}
    (entry / "intent.json").write_text(json.dumps({**older, "from_the_future": [1]}))

    from tests.factories import make_token

    client_env.cli("login", "--token", make_token(world.member), cwd=repo, SESSIONLEDGER_TOKEN=None)
    assert client_env.cli("sync", cwd=repo, SESSIONLEDGER_TOKEN=None).returncode == 0

    [session] = ledger.sessions()
    assert (session.start_offset, session.end_offset) == (0, intent["end_offset"])
    assert session.commit_hash == head(repo) and client_env.queue() == []
    [record] = list((client_env.state_dir / "sent").iterdir())
    assert json.loads(record.read_text())["intent"]["from_the_future"] == [1]

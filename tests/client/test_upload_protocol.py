"""How the uploader talks HTTP: the multipart body, Idempotency-Key, Retry-After and backoff —
against a scripted stub server, so each answer can be chosen."""

from __future__ import annotations

import email
import gzip
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.client.conftest import ClaudeSession, ClientEnv, expected_upload, head

# A scripted status that answers nothing for a while: the request times out.
SILENT = 0


class Stub:
    """Answers POSTs with the scripted (status, headers, body) in order; records each request.
    `SILENT` keeps the connection open without a word for 10 s, then answers 202."""

    def __init__(self) -> None:
        self.script: list[tuple[int, dict[str, str], dict]] = []
        self.requests: list[dict] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                stub.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                status, headers, reply = stub.script.pop(0) if stub.script else (202, {}, {"id": "x"})
                if status == SILENT:
                    time.sleep(10)
                    status = 202
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(json.dumps(reply).encode())

            def log_message(self, *args: object) -> None:
                pass

        return Handler


@pytest.fixture
def stub(client_env: ClientEnv) -> Iterator[Stub]:
    server = Stub()
    thread = threading.Thread(target=server.server.serve_forever, daemon=True)
    thread.start()
    client_env.vars.update(
        SESSIONLEDGER_SERVER=server.url, SESSIONLEDGER_TOKEN="slp_test", SESSIONLEDGER_PROJECT="acme-api"
    )
    yield server
    server.server.shutdown()


def commit(claude: ClaudeSession, name: str = "a") -> None:
    claude.prompt(f"add {name}")
    (claude.cwd / f"{name}.py").write_text("x = 1\n")
    claude.bash(f"git add -A && git commit -q -m 'Add {name}'")


def error(code: str, message: str, **extra: object) -> dict:
    return {"error": {"code": code, "message": message, "field": None, **extra}}


def parts(request: dict) -> dict[str, list[email.message.Message]]:
    head_bytes = f"Content-Type: {request['headers']['Content-Type']}\r\n\r\n".encode()
    message = email.message_from_bytes(head_bytes + request["body"])
    found: dict[str, list] = {}
    for part in message.get_payload():
        found.setdefault(part.get_param("name", header="content-disposition"), []).append(part)
    return found


def test_the_upload_is_one_multipart_post_with_metadata_gzip_parts_and_a_stable_key(stub, repo, claude) -> None:
    child = claude.builder.subagent("a77").user("look").assistant_text("seen")
    claude.subagent_file("a77").write_bytes(child.build())
    commit(claude)

    [request] = stub.requests
    assert request["path"] == "/api/v1/projects/acme-api/sessions"
    assert request["headers"]["Authorization"] == "Bearer slp_test"
    assert request["headers"]["Idempotency-Key"].startswith("sl1-")
    form = parts(request)
    metadata = json.loads(form["metadata"][0].get_payload(decode=True))
    assert metadata["commit_hash"] == head(repo) and metadata["kind"] == "checkpoint"
    assert metadata["subagents"] == [
        {"agent_id": "a77", "start_offset": 0, "end_offset": len(child.build()), "path": "subagents/agent-a77.jsonl"}
    ]
    [transcript] = form["transcript"]
    assert gzip.decompress(transcript.get_payload(decode=True)) == expected_upload(claude.content())
    [agent] = form["subagent"]
    assert agent.get_filename() == "agent-a77.jsonl.gz"
    assert gzip.decompress(agent.get_payload(decode=True)) == expected_upload(child.build())


def test_503_with_retry_after_is_honoured_and_the_retry_reuses_the_key(stub, repo, claude, client_env) -> None:
    stub.script.append((503, {"Retry-After": "40"}, error("storage_unavailable", "Object storage is unavailable.")))
    commit(claude)
    [entry] = client_env.queue()
    status = client_env.status(entry)
    assert status["state"] == "pending" and status["reason"] == "Object storage is unavailable."
    assert 38 <= status["next_at"] - time.time() <= 41

    assert client_env.cli("sync", cwd=repo).returncode == 0
    assert len({r["headers"]["Idempotency-Key"] for r in stub.requests}) == 1 and len(stub.requests) == 2


def test_429_waits_as_long_as_the_server_asks(stub, repo, claude, client_env) -> None:
    stub.script.append((429, {"Retry-After": "7"}, error("throttled", "Request was throttled.")))
    commit(claude)
    [entry] = client_env.queue()
    assert 5 <= client_env.status(entry)["next_at"] - time.time() <= 8


def test_server_errors_back_off_exponentially_with_jitter(stub, repo, claude, client_env) -> None:
    stub.script += [(500, {}, error("server_error", "boom"))] * 3
    client_env.vars.update(SESSIONLEDGER_RETRY_BASE_SECONDS="10", SESSIONLEDGER_RETRY_MAX_SECONDS="25")
    commit(claude)
    [entry] = client_env.queue()
    delays = [client_env.status(entry)["next_at"] - time.time()]
    for _ in range(2):
        client_env.cli("sync", cwd=repo)
        delays.append(client_env.status(entry)["next_at"] - time.time())
    assert 4 <= delays[0] <= 10 and 9 <= delays[1] <= 20 and 12 <= delays[2] <= 25
    assert client_env.status(entry)["attempts"] == 3


def test_a_conflict_is_a_definitive_duplicate(stub, repo, claude, client_env) -> None:
    stub.script.append((409, {}, error("conflict", "Commit already has a checkpoint session.", url="http://x/s/1")))
    commit(claude)
    assert client_env.queue() == []
    [sent] = list((client_env.state_dir / "sent").iterdir())
    assert json.loads(sent.read_text())["session"]["url"] == "http://x/s/1"


def test_a_sync_with_the_wait_flag_retries_until_the_server_takes_it(stub, repo, claude, client_env) -> None:
    stub.script += [(503, {"Retry-After": "1"}, error("unavailable", "busy"))] * 2
    commit(claude)
    result = client_env.cli("sync", "--wait", "--timeout", "30", cwd=repo)
    assert result.returncode == 0 and "Queue is empty" in result.stdout
    assert len(stub.requests) == 3


def test_a_wait_ends_saying_why_the_segment_waits_not_with_a_retry_cut_short(stub, repo, claude, client_env) -> None:
    busy = (503, {"Retry-After": "2"}, error("unavailable", "busy"))
    stub.script += [busy, busy, (SILENT, {}, {})]
    commit(claude)  # the hook's try: busy
    # sync's try is busy too; the retry after 2 s would have under a second left of the wait
    result = client_env.cli("sync", "--wait", "--timeout", "2.9", cwd=repo)
    assert result.returncode == 1
    assert "busy" in result.stdout and "did not answer" not in result.stdout
    assert len(stub.requests) == 2


def test_a_segment_the_server_fails_on_does_not_hold_back_the_others(stub, repo, claude, client_env) -> None:
    stub.script.append((500, {}, error("server_error", "boom")))
    commit(claude, "a")  # refused with a 500: waits to retry
    claude.prompt("add b")
    (repo / "b.py").write_text("b = 1\n")
    claude.bash("git add -A && git commit -q -m 'Add b'", SESSIONLEDGER_SERVER=None)  # queued, not sent
    stub.script += [(500, {}, error("server_error", "boom")), (202, {}, {"id": "b"})]

    client_env.cli("sync", cwd=repo)  # a fails again; b is sent all the same

    [left] = client_env.queue()
    assert json.loads((left / "intent.json").read_text())["commit_hash"] != head(repo)
    assert client_env.status(left)["reason"] == "boom" and len(stub.requests) == 3

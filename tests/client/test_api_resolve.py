"""Name resolution is inside every request's total deadline (docs/client.md "Deadlines"): a
resolver that never answers holds no hook or command, and names that resolve still connect.

`socket.getaddrinfo` is the client's boundary with the operating system's resolver, so that is
what these tests replace. No seconds are asserted: the hanging lookup answers only when the test
ends, so a request that waited for it would find it finished.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from sessionledger.api import ApiError, Client

REAL_GETADDRINFO = socket.getaddrinfo


class Answer(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"results": []}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def serving(server: ThreadingHTTPServer) -> Iterator[int]:
    """Serve in a thread; yields the port, then shuts the server down."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture
def local_server() -> Iterator[int]:
    yield from serving(ThreadingHTTPServer(("127.0.0.1", 0), Answer))


@pytest.fixture
def resolver(monkeypatch) -> Iterator[dict]:
    """Names: `hangs.example` never answers, `ledger.example` is 127.0.0.1, others do not exist."""
    release, asked, finished = threading.Event(), [], []

    def getaddrinfo(host, port, family=0, kind=0, proto=0, flags=0):
        if flags & socket.AI_NUMERICHOST:
            return REAL_GETADDRINFO(host, port, family, kind, proto, flags)
        asked.append(host)
        if host == "ledger.example":
            return REAL_GETADDRINFO("127.0.0.1", port, family, kind, proto, flags)
        if host == "hangs.example":
            release.wait(60)
            finished.append(host)
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield {"asked": asked, "finished": finished}
    release.set()


def test_a_resolver_that_never_answers_fails_the_request_as_a_timeout(resolver) -> None:
    with pytest.raises(ApiError) as refused:
        Client("http://hangs.example:8000", "slp_x", timeout=0.3).get("/projects")

    assert refused.value.code == "timeout" and refused.value.transient
    assert resolver["asked"] == ["hangs.example"] and resolver["finished"] == []  # given up on, not waited for


def test_names_that_resolve_connect_and_unknown_names_are_unreachable(resolver, local_server) -> None:
    reply = Client(f"http://ledger.example:{local_server}", "slp_x", timeout=5).get("/projects")
    with pytest.raises(ApiError) as refused:
        Client("http://nowhere.example", "slp_x", timeout=5).get("/projects")

    assert reply == {"results": []}
    assert refused.value.code == "unreachable" and "Name or service not known" in refused.value.message
    assert resolver["asked"] == ["ledger.example", "nowhere.example"]

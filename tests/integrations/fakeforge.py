"""A fake GitHub and GitLab API on loopback: it pages lists two items at a time (``Link: rel="next"``),
checks the App's JWT and the installation token it minted, and can answer a rate limit first."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jwt

PAGE = 2
INSTALLATION_TOKEN = "ghs_fake_installation_token"
GITLAB_TOKEN = "glpat-fake"


@dataclass
class FakeForge:
    app_id: str
    public_key: str
    url: str = ""
    commits: dict[str, list[str]] = field(default_factory=dict)  # API path → shas, oldest first
    requests: list[tuple[str, str]] = field(default_factory=list)
    rate_limited_once: set[str] = field(default_factory=set)  # paths answered 429 the first time
    scripted: list[tuple[int, dict[str, str]]] = field(default_factory=list)  # answers to /scripted, in turn

    def answer(self, handler: BaseHTTPRequestHandler) -> tuple[int, dict[str, str], Any]:
        parts = urlsplit(handler.path)
        self.requests.append((handler.command, parts.path))
        if parts.path == "/scripted":
            status, headers = self.scripted.pop(0)
            return status, headers, {"message": "scripted"}
        if parts.path in self.rate_limited_once:
            self.rate_limited_once.discard(parts.path)
            return 429, {"Retry-After": "0"}, {"message": "secondary rate limit"}
        if parts.path.startswith("/app/installations/") and handler.command == "POST":
            bearer = handler.headers.get("Authorization", "").removeprefix("Bearer ")
            claims = jwt.decode(bearer, self.public_key, algorithms=["RS256"])
            if claims["iss"] != self.app_id:
                return 401, {}, {"message": "Bad credentials"}
            return 201, {}, {"token": INSTALLATION_TOKEN, "expires_at": "2099-01-01T00:00:00Z"}
        authorized = handler.headers.get("Authorization") == f"token {INSTALLATION_TOKEN}" or (
            handler.headers.get("PRIVATE-TOKEN") == GITLAB_TOKEN
        )
        if not authorized:
            return 401, {}, {"message": "Bad credentials"}
        if parts.path not in self.commits:
            return 404, {}, {"message": "Not Found"}
        page = int(parse_qs(parts.query).get("page", ["1"])[0])
        shas = self.commits[parts.path]
        headers = {}
        if page * PAGE < len(shas):
            headers["Link"] = f'<{self.url}{parts.path}?page={page + 1}>; rel="next"'
        key = "id" if "/merge_requests/" in parts.path else "sha"
        return 200, headers, [{key: sha} for sha in shas[(page - 1) * PAGE : page * PAGE]]


@contextmanager
def running(forge: FakeForge) -> Iterator[FakeForge]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            status, headers, body = forge.answer(self)
            data = json.dumps(body).encode()
            self.send_response(status)
            for name, value in {"Content-Type": "application/json", **headers}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = do_PUT = _serve

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    forge.url = f"http://127.0.0.1:{server.server_port}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield forge
    finally:
        server.shutdown()
        server.server_close()

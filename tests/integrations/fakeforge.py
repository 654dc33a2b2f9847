"""A fake GitHub and GitLab API on loopback: it pages lists two items at a time (``Link: rel="next"``),
checks the App's JWT and the installation token it minted, can answer a rate limit first, serves the
commits of a small repository (parents and per-file diffs), GitHub's compare, and keeps the PR
comments (GitLab: notes) the app writes. Every request is recorded with its query and JSON body, for
the schema checks."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jwt

PAGE = 2  # items per page unless a test sets FakeForge.page_size
GITHUB_PR_COMMITS_CAP = 250  # GitHub's list of a PR's commits stops at 250
INSTALLATION_TOKEN = "ghs_fake_installation_token"
GITLAB_TOKEN = "glpat-fake"

GITHUB_COMMIT = re.compile(r"/repositories/\d+/commits/(?P<sha>[0-9a-f]+)")
GITHUB_COMPARE = re.compile(r"/repositories/\d+/compare/(?P<base>[0-9a-f]+)\.\.\.(?P<head>[0-9a-f]+)")
GITHUB_COMMENTS = re.compile(r"/repositories/\d+/issues/(?P<number>\d+)/comments")
GITHUB_COMMENT = re.compile(r"/repositories/\d+/issues/comments/(?P<id>\d+)")
GITHUB_CHECK_RUNS = re.compile(r"/repositories/\d+/check-runs(?:/(?P<id>\d+))?")
GITLAB_COMMIT = re.compile(r"/api/v4/projects/\d+/repository/commits/(?P<sha>[0-9a-f]+)(?P<diff>/diff)?")
GITLAB_NOTES = re.compile(r"/api/v4/projects/\d+/merge_requests/(?P<number>\d+)/notes(?:/(?P<id>\d+))?")


@dataclass(frozen=True)
class FakeCommit:
    sha: str
    parents: tuple[str, ...]
    files: tuple[tuple[str, str], ...]  # (path, patch) — every file here is modified


@dataclass
class Sent:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Any


@dataclass
class FakeForge:
    app_id: str
    public_key: str
    url: str = ""
    page_size: int = PAGE
    commits: dict[str, list[str]] = field(default_factory=dict)  # API path → shas, oldest first
    repository: dict[str, FakeCommit] = field(default_factory=dict)  # sha → commit
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)  # id → {"number", "body", "edits"}
    check_runs: list[dict[str, Any]] = field(default_factory=list)  # id - 1 → the run, with its "edits"
    checks_forbidden: bool = False  # an App installed without the Checks permission
    requests: list[tuple[str, str]] = field(default_factory=list)
    sent: list[Sent] = field(default_factory=list)
    rate_limited_once: set[str] = field(default_factory=set)  # paths answered 429 the first time
    scripted: list[tuple[int, dict[str, str]]] = field(default_factory=list)  # answers to /scripted, in turn
    hold_comment_post: threading.Event | None = None  # set: the first comment POST waits for it
    comment_post_reached: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, commit: FakeCommit) -> FakeCommit:
        self.repository[commit.sha] = commit
        return commit

    def comment_bodies(self, number: int) -> list[str]:
        return [c["body"] for c in self.comments.values() if c["number"] == number]

    def answer(self, handler: BaseHTTPRequestHandler, body: Any) -> tuple[int, dict[str, str], Any]:
        parts = urlsplit(handler.path)
        query = parse_qs(parts.query)
        with self.lock:
            self.requests.append((handler.command, parts.path))
            self.sent.append(Sent(handler.command, parts.path, query, body))
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
        if handler.command in ("POST", "PATCH", "PUT"):
            return self._write(handler.command, parts.path, body)
        return self._read(parts.path, int(query.get("page", ["1"])[0]))

    def _read(self, path: str, page: int) -> tuple[int, dict[str, str], Any]:
        if path in self.commits:
            shas = self.commits[path]
            if "/pulls/" in path:
                shas = shas[:GITHUB_PR_COMMITS_CAP]
            key = "id" if "/merge_requests/" in path else "sha"
            return self._page(path, page, [{key: sha} for sha in shas])
        if match := GITHUB_COMPARE.fullmatch(path):
            shas = self._between(match["base"], match["head"])
            headers, items = self._page(path, page, [{"sha": sha} for sha in shas])[1:]
            return 200, headers, {"total_commits": len(shas), "commits": items}
        if (match := GITHUB_COMMIT.fullmatch(path)) and match["sha"] in self.repository:
            commit = self.repository[match["sha"]]
            files = [{"filename": path, "status": "modified", "patch": patch} for path, patch in commit.files]
            return 200, {}, {"sha": commit.sha, "parents": [{"sha": p} for p in commit.parents], "files": files}
        if (match := GITLAB_COMMIT.fullmatch(path)) and match["sha"] in self.repository:
            commit = self.repository[match["sha"]]
            if match["diff"]:
                diffs = [{"old_path": p, "new_path": p, "diff": patch} for p, patch in commit.files]
                return self._page(path, page, diffs)
            return 200, {}, {"id": commit.sha, "parent_ids": list(commit.parents)}
        if match := GITHUB_COMMENTS.fullmatch(path):
            return self._page(path, page, self._comments_of(int(match["number"])))
        if (match := GITLAB_NOTES.fullmatch(path)) and not match["id"]:
            return self._page(path, page, self._comments_of(int(match["number"])))
        return 404, {}, {"message": "Not Found"}

    def _comments_of(self, number: int) -> list[dict[str, Any]]:
        with self.lock:
            return [{"id": i, "body": c["body"]} for i, c in self.comments.items() if c["number"] == number]

    def _write(self, method: str, path: str, body: Any) -> tuple[int, dict[str, str], Any]:
        created = (GITHUB_COMMENTS.fullmatch(path) if method == "POST" else None) or (
            GITLAB_NOTES.fullmatch(path) if method == "POST" else None
        )
        if created:
            if self.hold_comment_post is not None and not self.comment_post_reached.is_set():
                self.comment_post_reached.set()
                assert self.hold_comment_post.wait(60)
            with self.lock:
                comment_id = len(self.comments) + 1
                self.comments[comment_id] = {"number": int(created["number"]), "body": body["body"], "edits": 0}
            return 201, {}, {"id": comment_id, "body": body["body"]}
        edited = (GITHUB_COMMENT.fullmatch(path) if method == "PATCH" else None) or (
            GITLAB_NOTES.fullmatch(path) if method == "PUT" else None
        )
        if edited and edited["id"] and int(edited["id"]) in self.comments:
            with self.lock:
                comment = self.comments[int(edited["id"])]
                comment["body"], comment["edits"] = body["body"], comment["edits"] + 1
            return 200, {}, {"id": int(edited["id"]), "body": body["body"]}
        if run := GITHUB_CHECK_RUNS.fullmatch(path):
            if self.checks_forbidden:
                return 403, {}, {"message": "Resource not accessible by integration"}
            if method == "POST" and not run["id"]:
                self.check_runs.append({**body, "edits": 0})
                return 201, {}, {"id": len(self.check_runs), **body}
            if method == "PATCH" and run["id"] and int(run["id"]) <= len(self.check_runs):
                self.check_runs[int(run["id"]) - 1].update(body, edits=self.check_runs[int(run["id"]) - 1]["edits"] + 1)
                return 200, {}, {"id": int(run["id"])}
        return 404, {}, {"message": "Not Found"}

    def _between(self, base: str, head: str) -> list[str]:
        """head's first-parent ancestors not reachable from base, oldest first (enough for a branch)."""
        reachable, sha = set(), base
        while sha in self.repository:
            reachable.add(sha)
            sha = (self.repository[sha].parents or ("",))[0]
        found, sha = [], head
        while sha in self.repository and sha not in reachable:
            found.append(sha)
            sha = (self.repository[sha].parents or ("",))[0]
        return found[::-1]

    def _page(self, path: str, page: int, items: list[Any]) -> tuple[int, dict[str, str], Any]:
        headers = {}
        size = self.page_size
        if page * size < len(items):
            headers["Link"] = f'<{self.url}{path}?page={page + 1}>; rel="next"'
        return 200, headers, items[(page - 1) * size : page * size]


@contextmanager
def running(forge: FakeForge) -> Iterator[FakeForge]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            status, headers, body = forge.answer(self, json.loads(raw) if raw else None)
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

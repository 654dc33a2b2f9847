"""Fixtures for the client: an isolated HOME per test, real git repositories, a Claude-Code-like
session that writes a transcript and calls the hooks as real subprocesses, and a live server.

    def test_x(ledger, repo, claude):
        claude.prompt("add a file")
        (repo / "a.py").write_text("x = 1\\n")
        run = claude.bash("git add -A && git commit -m 'Add a'")
        assert ledger.session_for(head(repo))
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django_scopes import scopes_disabled

from sessionledger.core.formats import encode_project_dir, slim
from sessionledger.core.redaction import Redactor
from sessions_app.models import Session
from tests.client.transcript_builder import TranscriptBuilder
from tests.e2e.conftest import start_worker  # noqa: F401 - re-exported fixture
from tests.factories import make_token

REMOTE = "git@github.com:acme/acme-api.git"  # the world fixture's project repo: github.com/acme/acme-api
CLIENT_KEYS = ("SERVER", "TOKEN", "PROJECT", "REPOS", "MAX_RAW_BYTES", "UPLOAD_INLINE", "REDACTION")


@pytest.fixture(autouse=True)
def _module_rng_per_test(request: pytest.FixtureRequest) -> None:
    """A test module's `RNG` gives each test the same values whichever tests ran before it in this
    worker (pytest-xdist hands tests to workers in a different order each run)."""
    rng = getattr(request.module, "RNG", None)
    if isinstance(rng, random.Random):
        rng.seed(request.node.nodeid)


def expected_upload(new_bytes: bytes) -> bytes:
    """What the server must hold for these transcript bytes: slimmed, then redacted."""
    return Redactor().redact_bytes(slim(new_bytes)[0]).data


IDENTITY = {
    "GIT_AUTHOR_NAME": "Dev",
    "GIT_AUTHOR_EMAIL": "dev@example.com",
    "GIT_COMMITTER_NAME": "Dev",
    "GIT_COMMITTER_EMAIL": "dev@example.com",
}


def git(cwd: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
    env = env or {**os.environ, **IDENTITY}
    result = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if check and result.returncode:
        raise AssertionError(f"git {args}: {result.stderr}")
    return result.stdout.strip()


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD")


class ClientEnv:
    """The environment of one developer machine: HOME, XDG dirs, and how to run the client."""

    def __init__(self, root: Path) -> None:
        self.home = root / "home"
        self.home.mkdir(parents=True)
        self.state_dir = self.home / ".state" / "sessionledger"
        self.config_dir = self.home / ".config" / "sessionledger"
        self.vars = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith("SESSIONLEDGER_") and not key.startswith("CLAUDE")
        }
        self.vars.update(
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_STATE_HOME=str(self.home / ".state"),
            SESSIONLEDGER_UPLOAD_INLINE="1",
            # The live test server under a loaded CI box can take seconds; the deadline tests
            # unset this to run with the default (docs/client.md "SessionStart").
            SESSIONLEDGER_CONTEXT_TIMEOUT="20",
            **IDENTITY,
        )

    def env(self, **extra: str | None) -> dict[str, str]:
        merged = {**self.vars, **extra}
        return {k: v for k, v in merged.items() if v is not None}

    def cli(self, *args: str, cwd: Path | None = None, input: str | None = None, **extra: str | None):
        """Run `python -m sessionledger <args>`; returns the CompletedProcess (text)."""
        return subprocess.run(
            [sys.executable, "-m", "sessionledger", *args],
            cwd=cwd or self.home,
            env=self.env(**extra),
            input=input,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def hook(self, event: str, payload: dict[str, Any], **extra: str | None) -> subprocess.CompletedProcess:
        result = subprocess.run(
            [sys.executable, "-m", "sessionledger", "hook", event],
            input=json.dumps(payload).encode(),
            env=self.env(**extra),
            capture_output=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        return result

    def queue(self) -> list[Path]:
        directory = self.state_dir / "queue"
        return sorted(p for p in directory.iterdir() if (p / "intent.json").exists()) if directory.exists() else []

    def status(self, entry: Path) -> dict:
        return json.loads((entry / "status.json").read_text())

    def log(self) -> str:
        path = self.state_dir / "sessionledger.log"
        return path.read_text() if path.exists() else ""


class SettingsHooks:
    """Runs hooks the way Claude Code does: read from the user, project and project-local settings
    files, matched by event and matcher (docs/claude-code.md §2.1), each command through `sh -c` with the
    payload on stdin, `CLAUDE_PROJECT_DIR` set, in the environment Claude Code was started in."""

    def __init__(self, env: ClientEnv, project_dir: Path, **env_overrides: str | None) -> None:
        self.env, self.project_dir, self.overrides = env, project_dir, env_overrides

    def commands(self, event: str, subject: str = "") -> list[str]:
        files = [
            self.env.home / ".claude" / "settings.json",
            self.project_dir / ".claude" / "settings.json",
            self.project_dir / ".claude" / "settings.local.json",
        ]
        found: list[str] = []
        for path in files:
            settings = json.loads(path.read_text()) if path.exists() else {}
            for group in (settings.get("hooks") or {}).get(event, []):
                if _matches(group.get("matcher"), subject):
                    found += [h["command"] for h in group["hooks"] if h["command"] not in found]
        return found

    def fire(self, event: str, payload: dict[str, Any], subject: str = "") -> list[subprocess.CompletedProcess]:
        env = self.env.env(CLAUDE_PROJECT_DIR=str(self.project_dir), **self.overrides)
        data = json.dumps({**payload, "hook_event_name": event}).encode()
        return [
            subprocess.run(
                ["sh", "-c", command], input=data, env=env, cwd=self.project_dir, capture_output=True, timeout=60
            )
            for command in self.commands(event, subject)
        ]


def _matches(matcher: str | None, subject: str) -> bool:
    import re

    if matcher in (None, "", "*"):
        return True
    if re.fullmatch(r"[\w|]+", matcher):
        return subject in matcher.split("|")
    return re.search(matcher, subject) is not None


class ClaudeSession:
    """A Claude Code session: appends transcript lines, runs Bash for real, fires the hooks.

    With `hooks` (a SettingsHooks) the hooks come from the settings files `init` wrote and run
    through `sh -c`, PostToolUse for a command that succeeded and PostToolUseFailure for one that
    failed, as Claude Code 2.1.x does; without, the client's hook is called directly."""

    def __init__(
        self, env: ClientEnv, cwd: Path, session_id: str | None = None, hooks: SettingsHooks | None = None
    ) -> None:
        self.env, self.cwd, self.hooks = env, cwd, hooks
        self.session_id = session_id or str(uuid.uuid4())
        start = datetime.now(UTC) - timedelta(minutes=10)
        self.builder = TranscriptBuilder(self.session_id, cwd=str(cwd), start=start, step_seconds=0.5)
        project = env.home / ".claude" / "projects" / encode_project_dir(str(cwd))
        project.mkdir(parents=True, exist_ok=True)
        self.path = project / f"{self.session_id}.jsonl"
        self.written = 0

    def flush(self) -> bytes:
        """Append what the builder has that the file does not; returns the new bytes."""
        data = self.builder.build()
        new = data[self.written :]
        with self.path.open("ab") as handle:
            handle.write(new)
        self.written = len(data)
        return new

    def prompt(self, text: str) -> ClaudeSession:
        self.builder.prompt(text)
        self.builder.assistant_text(f"Working on: {text}")
        self.flush()
        return self

    def subagent_file(self, agent_id: str, *, legacy: bool = False) -> Path:
        """Where Claude Code writes a sub-agent: `<session>/subagents/` (2.1.2+), or beside the
        session file (`legacy`, before 2.1.2)."""
        if legacy:
            return self.path.parent / f"agent-{agent_id}.jsonl"
        directory = self.path.parent / self.session_id / "subagents"
        directory.mkdir(parents=True, exist_ok=True)
        return directory / f"agent-{agent_id}.jsonl"

    def tool_results_dir(self) -> Path:
        return self.path.parent / self.session_id / "tool-results"

    def persisted_tool_call(self, command: str, output: str) -> Path:
        """A Bash call whose output Claude Code (2.1.2+) saved to `<session>/tool-results/<id>.txt`,
        keeping a 2 KB preview in the transcript (docs/claude-code.md §1.1; anthropics/claude-code#23948)."""
        b = self.builder
        b.new_response().tool_use("Bash", {"command": command, "description": "run"})
        tool_id, use_uuid = b.last_tool_id, b.last_uuid
        saved = self.tool_results_dir() / f"{tool_id}.txt"
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.write_bytes(output.encode())
        size = f"{len(output.encode()) / 1024:.1f}KB"
        preview = (
            f"<persisted-output>\nOutput too large ({size}). Full output saved to: {saved}\n\n"
            f"Preview (first 2KB):\n{output[:2048]}\n...\n</persisted-output>"
        )
        result = {"stdout": output[:2048], "stderr": "", "interrupted": False, "isImage": False}
        b.tool_result(tool_id, preview, tool_use_result={**result, "persistedOutputPath": str(saved)}, parent=use_uuid)
        self.flush()
        return saved

    def bash(self, command: str, *, cwd: Path | None = None, hook: bool = True, **env: str | None):
        """Run `command` like the Bash tool, record it in the transcript, fire PostToolUse."""
        cwd = cwd or self.cwd
        self.builder.new_response().tool_use("Bash", {"command": command, "description": "run"})
        tool_id = self.builder.last_tool_id
        self.flush()
        result = subprocess.run(command, shell=True, cwd=cwd, env=self.env.env(**env), capture_output=True, text=True)
        response = {"stdout": result.stdout, "stderr": result.stderr, "interrupted": False, "isImage": False}
        output = (result.stdout + result.stderr).strip() or "(no output)"
        self.builder.tool_result(tool_id, output, is_error=result.returncode != 0, tool_use_result=response)
        self.flush()
        if hook and self.hooks is not None:
            self.fired = self._fire_tool_hooks(command, response, result, cwd, tool_id)
        elif hook:
            self.env.hook("post-tool-use", self.payload(command, response, cwd, tool_id), **env)
        return result

    def _fire_tool_hooks(self, command: str, response: dict, result: Any, cwd: Path, tool_id: str | None) -> list:
        payload = self.payload(command, response, cwd, tool_id)
        if result.returncode == 0:
            return self.hooks.fire("PostToolUse", payload, "Bash")  # type: ignore[union-attr]
        del payload["tool_response"]
        error = f"Exit code {result.returncode}\n{(result.stdout + result.stderr).strip()}"
        failure = {**payload, "error": error, "is_interrupt": False, "duration_ms": 12}
        return self.hooks.fire("PostToolUseFailure", failure, "Bash")  # type: ignore[union-attr]

    def start(self, source: str = "startup") -> list[subprocess.CompletedProcess]:
        """SessionStart through the settings hooks (requires `hooks`)."""
        payload = {"session_id": self.session_id, "transcript_path": str(self.path), "cwd": str(self.cwd)}
        return self.hooks.fire("SessionStart", {**payload, "source": source}, source)  # type: ignore[union-attr]

    def payload(self, command: str, response: dict, cwd: Path, tool_id: str | None = None) -> dict:
        return {
            "session_id": self.session_id,
            "transcript_path": str(self.path),
            "cwd": str(cwd),
            "permission_mode": "default",
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command, "description": "run"},
            "tool_response": response,
            "tool_use_id": tool_id or "toolu_01test",
        }

    def end(self, reason: str = "prompt_input_exit", **env: str | None) -> Any:
        if self.hooks is not None:
            base = {"session_id": self.session_id, "transcript_path": str(self.path), "cwd": str(self.cwd)}
            return self.hooks.fire("SessionEnd", {**base, "reason": reason}, reason)
        payload = {
            "session_id": self.session_id,
            "transcript_path": str(self.path),
            "cwd": str(self.cwd),
            "hook_event_name": "SessionEnd",
            "reason": reason,
        }
        return self.env.hook("session-end", payload, **env)

    def content(self) -> bytes:
        return self.path.read_bytes()


class Ledger:
    """The live server as the tests see it: its URL, a member's token, and its sessions."""

    def __init__(self, url: str, token: str, slug: str, api: Any) -> None:
        self.url, self.token, self.slug, self.api = url, token, slug, api

    def sessions(self, **filters: Any) -> list[Session]:
        with scopes_disabled():
            return list(Session.objects.filter(**filters).order_by("created_at"))

    def session_for(self, commit: str, kind: str = "checkpoint") -> Session:
        found = self.sessions(commit_hash=commit, kind=kind)
        assert len(found) == 1, f"{len(found)} {kind} sessions for {commit[:10]}"
        return found[0]

    def raw(self, session: Session) -> bytes:
        response = self.api.get(f"/api/v1/projects/{self.slug}/sessions/{session.pk}/raw")
        assert response.status_code == 200, response.content
        return gzip.decompress(b"".join(response.streaming_content))

    def wait_for(self, predicate: Callable[[], Any], seconds: float = 60) -> Any:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"not true after {seconds}s")


@pytest.fixture
def client_env(tmp_path: Path) -> ClientEnv:
    return ClientEnv(tmp_path)


def make_repo(path: Path, env: ClientEnv, remote: str | None = REMOTE) -> Path:
    """A repository with one commit made an hour ago (older than any test conversation)."""
    path.mkdir(parents=True)
    vars = env.env()
    git(path, "init", "-q", "-b", "main", env=vars)
    if remote:
        git(path, "remote", "add", "origin", remote, env=vars)
    (path / "README.md").write_text("# app\n")
    git(path, "add", "-A", env=vars)
    past = (datetime.now(UTC) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S+0000")
    git(path, "commit", "-q", "-m", "Initial commit", env={**vars, "GIT_AUTHOR_DATE": past, "GIT_COMMITTER_DATE": past})
    return path


@pytest.fixture
def repo(tmp_path: Path, client_env: ClientEnv) -> Path:
    return make_repo(tmp_path / "app", client_env)


@pytest.fixture
def claude(client_env: ClientEnv, repo: Path) -> ClaudeSession:
    return ClaudeSession(client_env, repo)


@pytest.fixture
def ledger(live_server, world, api_as, client_env: ClientEnv) -> Iterator[Ledger]:
    """The live server with the world's projects; the client is configured by environment."""
    token = make_token(world.member)
    client_env.vars.update(SESSIONLEDGER_SERVER=live_server.url, SESSIONLEDGER_TOKEN=token)
    yield Ledger(live_server.url, token, world.project.slug, api_as(world.member))
    end_detached(client_env.home)


def end_detached(home: Path, wait: float = 10.0) -> None:
    """Let the client's detached processes of this developer (uploader, digest refresh) end, and kill
    what still runs after `wait`: one still asking the live server while the test database is flushed
    for the next test can deadlock the flush (Linux: found by HOME in /proc/<pid>/environ)."""
    marker = f"\0HOME={home}\0".encode()

    def running() -> list[int]:
        pids = []
        for entry in os.scandir("/proc") if os.path.isdir("/proc") else []:
            if not entry.name.isdigit():
                continue
            try:
                with open(os.path.join(entry.path, "environ"), "rb") as environ:
                    if marker in b"\0" + environ.read():
                        pids.append(int(entry.name))
            except OSError:  # gone, or not ours to read
                continue
        return pids

    deadline = time.monotonic() + wait
    while (pids := running()) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def dead_server() -> str:
    """A URL where nothing listens (the port was free a moment ago)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"

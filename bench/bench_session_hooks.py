"""How long the SessionEnd and SessionStart hooks keep Claude Code waiting (prints one JSON object).

SessionEnd hooks share a 1.5 s budget (docs/claude-code.md §2.5): on `/clear` the hook must queue the
pre-clear segment and return at once — the uncommitted diff stat, slimming, redaction and the
upload happen in the detached process it starts. SessionStart fetches the context digest; it
must stay under a second whatever the server does: everything that waits for the network shares
one deadline, `context_timeout` (0.5 s by default).

The server is a stub on loopback (context digest of ~8,000 characters, uploads answered 202),
so the figures are the client's own cost plus one local round trip.

    .venv/bin/python bench/bench_session_hooks.py [--runs 11] [--mb 5] [--files 2000] [--python PY]

- `session_end_clear_ms`: the hook after a `--mb` MB conversation since the last capture, in a
  repository of `--files` files with uncommitted edits (until the hook exits);
- `session_end_detached_s`: until that segment is on the (stub) server, diff stat included;
- `session_start_clear_ms`: the SessionStart(clear) that follows at once (it waits for the
  upload's URL until the deadline, then says "queued");
- `session_start_ms`: `startup` with the digest; `session_start_server_down_ms` (refused) and
  `session_start_silent_server_ms` (a server that accepts and never answers, default deadline)
  for the failure paths (`python_c_pass_ms` is the floor of every figure).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from bench_hook import SESSION, byte_compile_client, line, timed, turn_bytes

DIGEST = (
    "Sessionledger: earlier conversations in bench (branch main), newest first.\n"
    + ("\n## checkpoint 0123456789 · 2026-01-01 · dev@example.com · same branch\n- keep the hook fast\n" * 80)[:7900]
)


class Stub(BaseHTTPRequestHandler):
    """Just enough of the API: the context digest and the ingest endpoint."""

    def do_GET(self) -> None:
        body = {"text": DIGEST, "length": len(DIGEST), "budget": 8000, "sessions": [{"id": "x", "reason": "recent"}]}
        self._reply(200, body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        session = str(uuid.uuid4())
        self._reply(
            202, {"id": session, "status": "pending", "url": "-", "web_url": f"http://stub/p/bench/s/{session}"}
        )

    def _reply(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


class Sandbox:
    def __init__(self, root: Path, files: int, server: str) -> None:
        self.repo = root / "repo"
        self.repo.mkdir()
        self.transcript = root / "home" / ".claude" / "projects" / "-repo" / f"{SESSION}.jsonl"
        self.transcript.parent.mkdir(parents=True)
        self.state = root / "home" / ".state" / "sessionledger"
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("SESSIONLEDGER_")},
            "HOME": str(root / "home"),
            "XDG_CONFIG_HOME": str(root / "home" / ".config"),
            "XDG_STATE_HOME": str(root / "home" / ".state"),
            "SESSIONLEDGER_SERVER": server,
            "SESSIONLEDGER_TOKEN": "sl_bench",
            "SESSIONLEDGER_PROJECT": "bench",
            "GIT_AUTHOR_NAME": "Bench",
            "GIT_AUTHOR_EMAIL": "bench@example.com",
            "GIT_COMMITTER_NAME": "Bench",
            "GIT_COMMITTER_EMAIL": "bench@example.com",
        }
        for n in range(files):
            path = self.repo / f"pkg{n % 20}" / f"mod{n}.py"
            path.parent.mkdir(exist_ok=True)
            path.write_text("".join(f"value_{i} = {i}\n" for i in range(40)))
        self.git("init", "-q", "-b", "main")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "start")
        self.transcript.write_bytes(line("user", message={"role": "user", "content": "hello"}))

    def git(self, *args: str) -> None:
        subprocess.run(["git", *args], cwd=self.repo, env=self.env, check=True, capture_output=True)

    def dirty(self, n: int) -> None:
        for i in range(5):
            with (self.repo / f"pkg{i}" / f"mod{i}.py").open("a") as handle:
                handle.write(f"extra_{n} = {n}\n")

    def payload(self, event: str, **fields: str) -> bytes:
        base = {"session_id": SESSION, "transcript_path": str(self.transcript), "cwd": str(self.repo)}
        return json.dumps({**base, "hook_event_name": event, **fields}).encode()

    def sent(self) -> int:
        directory = self.state / "sent"
        return len(list(directory.iterdir())) if directory.exists() else 0

    def wait_sent(self, count: int, timeout: float = 300) -> float:
        started = time.perf_counter()
        while self.sent() < count and time.perf_counter() - started < timeout:
            time.sleep(0.005)
        return time.perf_counter() - started


def hook(python: str, event: str) -> list[str]:
    script = Path(python).parent / "sessionledger"
    prefix = [python, str(script)] if script.exists() else [python, "-m", "sessionledger"]
    return [*prefix, "hook", event]


def median(values: list[float], digits: int = 1) -> float:
    return round(statistics.median(values), digits)


def bench_clear(box: Sandbox, python: str, runs: int, megabytes: float) -> dict:
    delta = turn_bytes(megabytes)
    base_ms, end_ms, start_ms, detached_s, said = [], [], [], [], []
    for n in range(runs):
        with box.transcript.open("ab") as handle:
            handle.write(delta)
        box.dirty(n)
        sent = box.sent()
        base_ms.append(timed([python, "-c", "pass"]))  # paired: load on the machine affects both alike
        started = time.perf_counter()
        end_ms.append(timed(hook(python, "session-end"), stdin=box.payload("SessionEnd", reason="clear"), env=box.env))
        start_began = time.perf_counter()
        result = subprocess.run(
            hook(python, "session-start"),
            input=box.payload("SessionStart", source="clear", session_id=str(uuid.uuid4())),
            env=box.env,
            capture_output=True,
            check=True,
        )
        start_ms.append((time.perf_counter() - start_began) * 1000)
        box.wait_sent(sent + 1)
        detached_s.append(time.perf_counter() - started)
        context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
        said.append(context.splitlines()[0])
    return {
        "python_c_pass_ms": median(base_ms),
        "session_end_clear_ms": median(end_ms),
        "session_end_clear_ratio": round(statistics.median(end_ms) / statistics.median(base_ms), 2),
        "session_end_clear_max_ms": round(max(end_ms), 1),
        "session_start_clear_ms": median(start_ms),
        "session_end_detached_s": median(detached_s, 2),
        "clear_report_example": said[-1],
    }


def bench_start(box: Sandbox, python: str, runs: int, **env: str) -> float:
    payload = box.payload("SessionStart", source="startup")
    return median([timed(hook(python, "session-start"), stdin=payload, env={**box.env, **env}) for _ in range(runs)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--mb", type=float, default=5.0)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--python", default=sys.executable, help="interpreter with the client installed")
    options = parser.parse_args()
    python = options.python
    byte_compile_client(python)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    root = Path(tempfile.mkdtemp(prefix="bench-session-hooks-"))
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)
    try:
        box = Sandbox(root, options.files, url)
        clear = bench_clear(box, python, options.runs, options.mb)
        startup = bench_start(box, python, options.runs)
        down = bench_start(box, python, max(3, options.runs // 3), SESSIONLEDGER_SERVER="http://127.0.0.1:9")
        quiet = bench_start(box, python, 5, SESSIONLEDGER_SERVER=f"http://127.0.0.1:{silent.getsockname()[1]}")
    finally:
        server.shutdown()
        silent.close()
        shutil.rmtree(root, ignore_errors=True)
    result = {
        "python": python,
        "runs": options.runs,
        "delta_mb": options.mb,
        "repo_files": options.files,
        **clear,
        "session_start_ms": startup,
        "session_start_server_down_ms": down,
        "session_start_silent_server_ms": quiet,
        "targets": {"session_end_clear_ms": 1500 / 3, "session_start_ms": 1000, "session_start_silent_server_ms": 1000},
    }
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()

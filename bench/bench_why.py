"""`sessionledger why FILE:LINE` against a warm server: is it under a second?

    .venv/bin/python bench/bench_why.py [--turns 100] [--runs 15]

A throwaway project gets one captured commit in a real git repository: an agent session of
``--turns`` turns (each a prompt, a reply and an Edit of ``app.py``; 4 messages a turn), a human
line among them, the session stored through the real ingest, processed, and its attribution
record stored as an upload would. Gunicorn serves it on the benchmark database (warmed by one
request). Then, timed:

- ``why_cli``: the whole command as a user runs it — a new Python process, ``git blame -L``, the
  file's diff in its commit, one POST to ``…/commits/{sha}/why`` — for a line of the last turn;
- ``why_request``: that POST alone (the server's share: records, content document, context);
- ``python_start``: ``python -c pass`` with the same interpreter, the floor of any CLI command.

Prints one JSON object (median, p90, best in ms); the project, the repository and the server are
removed after.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

from djangobench import ROOT, percentile, setup, stored_session


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com"}
    env.update(GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.com")
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True).stdout


def build(repo: Path, turns: int) -> bytes:
    """The agent grows app.py one function per turn; a human adds one line in the middle."""
    from tests.client.transcript_builder import TranscriptBuilder

    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("bench\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    path, text = repo / "app.py", ""
    builder = TranscriptBuilder(start="2026-02-10T09:00:00Z", step_seconds=3, cwd=str(repo))
    for turn in range(turns):
        builder.prompt(f"Turn {turn}: add function f{turn} that doubles its input")
        builder.assistant_text(f"I will add `f{turn}` at the end of app.py.")
        block = f"def f{turn}(x):\n    return 2 * x + {turn}\n\n\n"
        builder.new_response().tool_call(
            "Edit", {"file_path": str(path), "old_string": text, "new_string": text + block}
        )
        text += block
        if turn == turns // 2:
            text += "HUMAN = True\n"
    path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Functions")
    return builder.build()


def store(project, user, repo: Path, raw: bytes, site: str):
    from projects.scoping import project_scope
    from sessionledger import attribution_capture, gitmeta
    from sessions_app.attribution.services import attribution_store
    from sessions_app.processing import session_process

    sha = git(repo, "rev-parse", "HEAD").strip()
    session = stored_session(project, user, raw, commit_hash=sha, **gitmeta.commit_facts(str(repo), sha))
    record = attribution_capture.record_for_commit(
        str(repo), sha, {"transcript": raw}, agent="claude-code", base_url=site, project=project.slug
    )
    with project_scope(project):
        session_process(session=session)
        attribution_store(session=session, data=json.dumps(record).encode())
    return sha, record


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(port: int) -> subprocess.Popen:
    env = {**os.environ, "ALLOWED_HOSTS": "127.0.0.1", "SITE_URL": f"http://127.0.0.1:{port}"}
    env["SESSIONLEDGER_QUERY_RATE"] = "100000/min"
    gunicorn = Path(sys.executable).parent / "gunicorn"
    web = subprocess.Popen(
        [str(gunicorn), "config.wsgi", "-b", f"127.0.0.1:{port}", "-w", "2", "--log-level", "warning"],
        cwd=ROOT,
        env=env,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5):
                return web
        except OSError:
            time.sleep(0.3)
    web.terminate()
    raise SystemExit("the web server did not become healthy in 60 s")


def summary(values: list[float]) -> dict[str, float]:
    return {
        "median_ms": round(statistics.median(values), 1),
        "p90_ms": round(percentile(values, 0.9), 1),
        "best_ms": round(min(values), 1),
    }


def timed_ms(command: list[str], **kwargs: object) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, **kwargs)
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--runs", type=int, default=15)
    options = parser.parse_args()
    setup()
    from projects import services
    from projects.models import Membership, Project, Role, User
    from projects.scoping import unscoped

    port = free_port()
    site = f"http://127.0.0.1:{port}"
    slug = f"bench-why-{uuid.uuid4().hex[:8]}"
    with unscoped():
        project = Project.objects.create(slug=slug, name="bench why")
        user = User.objects.create(email=f"{slug}@example.com")
        Membership.objects.create(project=project, user=user, role=Role.MEMBER)
        _, token = services.token_create(user=user, name="bench", scopes=["read"])
    web = None
    with tempfile.TemporaryDirectory() as tmp:
        repo, home = Path(tmp) / "repo", Path(tmp) / "home"
        repo.mkdir()
        home.mkdir()
        try:
            raw = build(repo, options.turns)
            sha, record = store(project, user, repo, raw, site)
            web = serve(port)
            line = len((repo / "app.py").read_text().splitlines()) - 2  # in the last function
            env = {**os.environ, "HOME": str(home), "SESSIONLEDGER_SERVER": site, "SESSIONLEDGER_TOKEN": token}
            env["SESSIONLEDGER_PROJECT"] = slug
            command = [sys.executable, "-m", "sessionledger", "why", f"app.py:{line}"]
            first = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)
            assert first.returncode == 0 and "Written by the agent" in first.stdout, first.stdout + first.stderr
            cli = [timed_ms(command, cwd=repo, env=env) for _ in range(options.runs)]
            request = _request_times(site, token, slug, sha, line, repo, options.runs)
            floor = [timed_ms([sys.executable, "-c", "pass"]) for _ in range(options.runs)]
        finally:
            if web is not None:
                web.terminate()
                web.wait(timeout=30)
            with unscoped():
                project.delete()
                user.delete()
    vendor = record["metadata"]["dev.sessionledger"]
    print(
        json.dumps(
            {
                "turns": options.turns,
                "messages": options.turns * 4,
                "transcript_bytes": len(raw),
                "added_lines": vendor["added_lines"],
                "ai_lines": vendor["ai_lines"],
                "why_cli": summary(cli),
                "why_request": summary(request),
                "python_start": summary(floor),
                "target_ms": 1000,
            },
            indent=2,
        )
    )


def _request_times(site: str, token: str, slug: str, sha: str, line: int, repo: Path, runs: int) -> list[float]:
    from sessionledger.commands.blame import added_rows
    from sessionledger.core import attribution

    text = (repo / "app.py").read_text().splitlines()[line - 1]
    body = json.dumps(
        {
            "path": "app.py",
            "line": line,
            "hash": attribution.line_hash(text),
            "added": added_rows(str(repo), sha, "app.py"),
        }
    ).encode()
    url = f"{site}/api/v1/projects/{slug}/commits/{sha}/why"
    times = []
    for _ in range(runs):
        request = urllib.request.Request(url, data=body, method="POST")
        request.add_header("Authorization", f"Bearer {token}")
        request.add_header("Content-Type", "application/json")
        started = time.perf_counter()
        with urllib.request.urlopen(request, timeout=30) as response:
            assert json.loads(response.read())["contributor"] == "ai"
        times.append((time.perf_counter() - started) * 1000)
    return times


if __name__ == "__main__":
    main()

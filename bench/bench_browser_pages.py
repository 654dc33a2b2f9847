"""First paint and "every message in the DOM" in Chromium: our session page and whole-conversation page
against claude-code-transcripts' and claude-code-log's HTML of the same transcript, in one run.

    .venv/bin/python bench/bench_browser_pages.py [--repeat 5] [--turns 25 --output-lines 420] [--real PATH ...]
        [--against DIR] [--arrive blank|link]

Transcripts: the largest real one found (``--real``, default the ``*.jsonl`` files of
``SESSIONLEDGER_REAL_TRANSCRIPTS`` or ``/work/shared/fixtures/transcripts``; absent, skipped) and the page
bench's realistic long session (``bench_session_page.transcript``; the defaults give ~3.5 MB, ~509
messages). Each is stored and processed through the real ingest and worker code twice: as one session
(the session page) and cut into ``--segments`` commits of one agent session (the whole-conversation page).

Our pages are served by gunicorn (``config.wsgi``, 2 workers × 4 threads, production settings) against
the bench database; the peers' HTML by a small static server that gzips as any web server would (no
validators, so their second view is not measured against ours). Each view opens in a fresh browser
context (a cold cache), signed in for ours, the pages taking turns (a shared machine's load drifts).
Per page, the median of ``--repeat`` views of:

- ``first_paint_ms``: first contentful paint;
- ``all_messages_ms``: when the last message is in the DOM: for a single page, the end of parsing
  (``domInteractive``) and, for ours, the moment the later pages are appended (the ``#more`` link
  gone: the head preloads them as one response of their cards, appended after the first paint); for
  claude-code-transcripts, which writes an index of prompts and one page per 5 prompts,
  measured from its first page: the sum over its pages of each page's ``domInteractive``, what a
  reader clicking through them waits for (their clicks not counted);
- ``ttfb_ms`` (the first byte of the page: ours is rendered, authorised and counted in the access log
  per view, the peers' are files), ``load_ms``, ``bytes`` (transferred, compressed) and, for ours,
  ``second_view_bytes`` (the same tab reloaded: revalidated by ETag, 304).

A view whose browser reported no first contentful paint (headless Chromium under load now and then
does not) is left out of that figure's median; ``load_average`` is the machine's before and after.

``--against DIR`` serves a checkout of another commit (``git worktree add DIR main``) by a second
gunicorn on the same database, its pages (``against_session_page``, ``against_whole_conversation``)
taking turns with the others: a change measured against what it changes in one run, under the same
load (separate runs on a shared machine differ by more than most changes).

``--arrive``: where each view starts. ``blank`` (the default): a new tab, as a reader who pastes the
address. ``link``: a page of another site (``localhost``, where the pages are on ``127.0.0.1``), as a
reader following the link in a pull request; the figures are the navigation to the page. It matters
for a page that sends ``Cross-Origin-Opener-Policy`` (ours do; the peers' files, served here, do not):
from a blank tab Chromium puts that page in a new browsing context group, in a new renderer process,
and a page without the header keeps the tab's; from another site every page changes process
(site isolation), with or without the header.

Ours also reports ``first_reader``: the first view after the worker processed the session (page 1
warmed by the worker, the later pages rendered on demand), apart from the median of the views after it.

Peers are never dependencies of the project: install them into a throwaway venv
(``python3.11 -m venv /tmp/peers && /tmp/peers/bin/pip install claude-code-transcripts claude-code-log``).
Their commands come from ``BENCH_CLAUDE_CODE_TRANSCRIPTS`` / ``BENCH_CLAUDE_CODE_LOG`` (a path to the
executable), else ``PATH``, else ``/tmp/peers/bin``; a peer that is absent is skipped, and the output says so.

Prints one JSON object; the project, its blobs and the peers' output are deleted after.
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import http.server
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
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("DEBUG", "false")  # production settings, as every bench of the service

from djangobench import ROOT, project_remove, setup, stored_session

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
REAL = Path(os.environ.get("SESSIONLEDGER_REAL_TRANSCRIPTS", "/work/shared/fixtures/transcripts"))
PEERS = {"claude-code-transcripts": "BENCH_CLAUDE_CODE_TRANSCRIPTS", "claude-code-log": "BENCH_CLAUDE_CODE_LOG"}

# Runs before any script of the page: notes the first moment the document is parsed and has no
# "Later messages" link left (ours appends its later pages; a peer's page has none).
ALL_IN = """
(() => {
  const check = () => {
    if (window.__allIn || document.readyState === "loading" || document.getElementById("more")) return;
    window.__allIn = performance.now();
  };
  new MutationObserver(check).observe(document, { childList: true, subtree: true });
  document.addEventListener("readystatechange", check);
})();
"""

# The page a ``--arrive link`` view starts on: another site's, as a pull request holding the link.
ELSEWHERE = "<!doctype html><title>Elsewhere</title><p>A link to the session."

FIGURES = """
() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const paint = performance.getEntriesByName("first-contentful-paint")[0];
  const fetched = performance.getEntriesByType("resource").reduce((n, r) => n + r.transferSize, 0);
  return {
    first_paint_ms: paint ? paint.startTime : null,
    dom_interactive_ms: nav.domInteractive,
    ttfb_ms: nav.responseStart,
    load_ms: nav.loadEventEnd,
    all_messages_ms: window.__allIn || null,
    bytes: nav.transferSize + fetched,
  };
}
"""


def peer_command(name: str) -> str | None:
    """The peer's executable: its environment variable, else PATH, else the throwaway venv; None if absent."""
    for candidate in (os.environ.get(PEERS[name]), name, str(Path("/tmp/peers/bin") / name)):
        found = shutil.which(candidate) if candidate else None
        if found:
            return found
    return None


def peer_html(name: str, command: str, transcript: Path, out: Path) -> list[Path]:
    """The peer's HTML pages of ``transcript`` in reading order (first: the one a reader opens)."""
    out.mkdir(parents=True)
    if name == "claude-code-transcripts":
        subprocess.run([command, "json", str(transcript), "-o", str(out)], check=True, capture_output=True)
        # its index.html lists the prompts; the messages are on page-001.html…, where the timing starts
        return sorted(out.rglob("page-*.html")) or sorted(out.rglob("index.html"))[:1]
    target = out / "transcript.html"
    subprocess.run([command, str(transcript), "-o", str(target)], check=True, capture_output=True)
    return [target] if target.exists() else sorted(out.rglob("*.html"))[:1]


class _GzipStatic(http.server.SimpleHTTPRequestHandler):
    """Static files, gzip-compressed for a browser that accepts it (as nginx's gzip would)."""

    def do_GET(self) -> None:
        path = Path(self.translate_path(self.path))
        if not path.is_file():
            self.send_error(404)
            return
        body = path.read_bytes()
        zipped = "gzip" in self.headers.get("Accept-Encoding", "")
        if zipped:
            body = gzip.compress(body, 6)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        if zipped:
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def static_server(folder: Path) -> Iterator[str]:
    handler = lambda *a, **k: _GzipStatic(*a, directory=str(folder), **k)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def our_server(root: Path = ROOT, workers: int = 2, *, probed: bool = True) -> Iterator[str]:
    """gunicorn serving the checkout at ``root`` (this one) against the bench database (setup() has
    pointed DATABASE_URL at it), with production's settings (config/gunicorn.py); yielded once a worker
    answers ``/livez`` or, not ``probed``, as soon as the master listens (no worker has served yet)."""
    port = _free_port()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "ALLOWED_HOSTS": "127.0.0.1"}
    if root != ROOT:  # its modules before this checkout's, which the venv installs
        env["PYTHONPATH"] = str(root)
    gunicorn = [sys.executable, "-m", "gunicorn", "config.wsgi", "--config", "python:config.gunicorn"]
    gunicorn += ["-b", f"127.0.0.1:{port}"]
    process = subprocess.Popen(
        [*gunicorn, "--workers", str(workers), "--threads", "4", "--log-level", "warning"],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if process.poll() is not None:
                    error = process.stderr.read().decode() if process.stderr else "gunicorn exited"
                    raise RuntimeError(error) from None
                time.sleep(0.1)
        if probed:
            answering(f"http://127.0.0.1:{port}")
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def answering(base: str) -> None:
    """Wait until a worker of the server at ``base`` answers ``/livez`` (the master listens first; a
    worker loads the pages before it takes a request: config/warmup.py)."""
    host, port = base.removeprefix("http://").split(":")
    for _ in range(600):
        try:
            connection = http.client.HTTPConnection(host, int(port), timeout=5)
            connection.request("GET", "/livez")
            if connection.getresponse().status == 200:
                return
        except OSError:
            pass
        finally:
            connection.close()
        time.sleep(0.05)
    raise RuntimeError(f"{base}/livez did not answer")


def view(
    browser: Any,
    url: str,
    cookies: list[dict[str, Any]],
    *,
    pages: list[str] | None = None,
    arrive_from: str | None = None,
) -> dict[str, Any]:
    """One cold view of ``url`` (and, for a paged peer, of each of ``pages`` after it, summed), opened
    from a blank tab or, with ``arrive_from``, from that page (the figures are the second navigation's)."""
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    context.add_init_script(ALL_IN)
    if cookies:
        context.add_cookies(cookies)
    page = context.new_page()
    if arrive_from:
        page.goto(arrive_from, wait_until="load", timeout=120_000)
    response = page.goto(url, wait_until="load", timeout=120_000)
    if response is None or response.status != 200 or page.url != url:  # a sign-in page is no view of ours
        raise RuntimeError(f"{url}: {response.status if response else 'no response'} at {page.url}")
    page.wait_for_function("() => window.__allIn", timeout=120_000)
    figures = page.evaluate(FIGURES)
    if pages:
        total = figures["dom_interactive_ms"]
        for other in pages:
            page.goto(other, wait_until="load", timeout=120_000)
            found = page.evaluate(FIGURES)
            total += found["dom_interactive_ms"]
            figures["bytes"] += found["bytes"]
        figures["all_messages_ms"] = total
        figures["pages"] = 1 + len(pages)
    elif cookies:
        page.reload(wait_until="load")
        page.wait_for_function("() => window.__allIn", timeout=120_000)
        figures["second_view_bytes"] = page.evaluate(FIGURES)["bytes"]
    context.close()
    return figures


def medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's median over the views that report it."""
    found: dict[str, Any] = {}
    for key in runs[0]:
        values = [run[key] for run in runs if isinstance(run.get(key), int | float)]
        if values:
            found[key] = round(statistics.median(values), 1)
    return found


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else ""


def stored(project: Any, user: Any, raw: bytes, segments: int) -> tuple[Any, Any]:
    """The transcript as one session, and as ``segments`` commits of one agent session (the last one)."""
    from projects.scoping import project_scope
    from sessions_app.models import Session
    from sessions_app.processing import session_process

    def processed(chunk: bytes, **metadata: Any) -> Session:
        session = stored_session(project, user, chunk, **metadata)
        with project_scope(project):
            session_process(session=session)
            return Session.objects.get(pk=session.pk)

    single = processed(raw)
    lines = raw.splitlines(keepends=True)
    size = -(-len(lines) // segments)
    agent, start, last = str(uuid.uuid4()), 0, single
    for number, first in enumerate(range(0, len(lines), size), start=1):
        chunk = b"".join(lines[first : first + size])
        last = processed(
            chunk,
            agent_session_id=agent,
            start_offset=start,
            end_offset=start + len(chunk),
            commit_message=f"Commit {number}",
        )
        start += len(chunk)
    return single, last


@contextmanager
def bench_reader(name: str) -> Iterator[tuple[Any, Any, str]]:
    """A throwaway project with a signed-in viewer: (project, user, the value of their session cookie);
    the project, its sessions and blobs and the user are deleted after."""
    from django.conf import settings
    from django.test import Client

    from projects.models import Project, Role, User
    from projects.scoping import project_scope
    from projects.services import membership_add

    tag = uuid.uuid4().hex[:8]
    user = User.objects.create_user(f"bench-{name}-{tag}@example.com")
    project = Project.objects.create(slug=f"bench-{name}-{tag}", name=f"Bench {name}")
    with project_scope(project):
        membership_add(project=project, user=user, role=Role.VIEWER)
    try:
        client = Client()
        client.force_login(user)
        yield project, user, client.cookies[settings.SESSION_COOKIE_NAME].value
    finally:
        project_remove(project, user)


def real_transcripts() -> list[Path]:
    """The real transcripts found (``REAL``), none when its folder is absent."""
    return sorted(REAL.glob("*.jsonl")) if REAL.is_dir() else []


def largest_of(paths: list[Path]) -> Path:
    return max(paths, key=lambda path: path.stat().st_size)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--turns", type=int, default=25)
    parser.add_argument("--output-lines", type=int, default=420)
    parser.add_argument("--segments", type=int, default=5)
    parser.add_argument("--real", nargs="*", type=Path, default=real_transcripts())
    parser.add_argument("--against", type=Path, help="a checkout of another commit, served beside this one")
    parser.add_argument(
        "--arrive",
        choices=["blank", "link"],
        default="blank",
        help="open each view from a blank tab, or from a page of another site (a pull request's link)",
    )
    args = parser.parse_args(argv)
    if not CHROMIUM.exists():
        sys.exit("Debian's chromium is not installed at /usr/bin/chromium (make browser)")
    setup()
    from bench_session_page import transcript
    from django.conf import settings
    from playwright.sync_api import sync_playwright

    settings.ALLOWED_HOSTS = ["*"]
    inputs: dict[str, bytes] = {}
    if args.real:
        largest = largest_of(args.real)
        inputs[f"real {largest.name}"] = largest.read_bytes()
    inputs[f"realistic {args.turns} turns"] = transcript(args.turns, args.output_lines)
    peers = {name: peer_command(name) for name in PEERS}
    figures: dict[str, Any] = {
        "arrive": args.arrive,
        "load_average": {"before": load_average()},
        "peers_skipped": {name: f"not found (set {PEERS[name]})" for name, command in peers.items() if not command},
    }
    scratch = Path(tempfile.mkdtemp(prefix="bench-browser-"))
    try:
        with bench_reader("browser") as (project, user, cookie):
            cookies = [{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "domain": "127.0.0.1", "path": "/"}]
            # stored before Playwright starts: its event loop makes Django refuse ORM calls in this thread
            sessions = {label: stored(project, user, raw, args.segments) for label, raw in inputs.items()}
            with ExitStack() as servers:
                ours = servers.enter_context(our_server())
                against = servers.enter_context(our_server(args.against.resolve())) if args.against else None
                static = servers.enter_context(static_server(scratch))
                playwright = servers.enter_context(sync_playwright())
                browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
                (scratch / "elsewhere.html").write_text(ELSEWHERE)
                # "localhost" is another site than "127.0.0.1", where every page of the bench is served
                start = f"{static.replace('127.0.0.1', 'localhost')}/elsewhere.html" if args.arrive == "link" else None
                for label, raw in inputs.items():
                    single, last = sessions[label]
                    paths = {"session_page": f"s/{single.pk}", "whole_conversation": f"s/{last.pk}/conversation"}
                    urls = {
                        f"{name}_{page}": f"{server}/p/{project.slug}/{path}"
                        for name, server in (("ours", ours), ("against", against))
                        if server
                        for page, path in paths.items()
                    }
                    entry: dict[str, Any] = {"raw_bytes": len(raw), "messages": single.message_count}
                    views: dict[str, Callable[[], dict[str, Any]]] = {
                        name: lambda url=url: view(browser, url, cookies, arrive_from=start)
                        for name, url in urls.items()
                    }
                    firsts = {name: medians([measure()]) for name, measure in views.items()}
                    folder = scratch / uuid.uuid4().hex
                    source = folder / "session.jsonl"
                    folder.mkdir()
                    source.write_bytes(raw)
                    for name, command in peers.items():
                        if not command:
                            continue
                        try:
                            html = peer_html(name, command, source, folder / name)
                        except subprocess.CalledProcessError as exc:
                            entry[name] = {"failed": exc.stderr.decode(errors="replace")[-300:]}
                            continue
                        links = [f"{static}/{path.relative_to(scratch)}" for path in html]
                        views[name] = lambda links=links: view(
                            browser, links[0], [], pages=links[1:] or None, arrive_from=start
                        )
                    # round robin: the load of a shared machine drifts, so every page sees the same drift
                    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in views}
                    for _ in range(args.repeat):
                        for name, measure in views.items():
                            runs[name].append(measure())
                    for name, found in runs.items():
                        entry[name] = {**medians(found), **({"first_reader": firsts[name]} if name in firsts else {})}
                    figures[label] = entry
                browser.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    figures["load_average"]["after"] = load_average()
    json.dump(figures, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()

"""Server time of the session pages over HTTP: this checkout against another commit's, in one run.

    .venv/bin/python bench/bench_first_byte.py --against DIR [--repeat 30] [--turns 25 --output-lines 420]

The pages of ``bench_browser_pages.py`` (its transcripts: the largest real one and the realistic long
session, each stored as one session and as the segments of one agent session), served by two gunicorns
on the bench database (``config.wsgi``, 2 workers × 4 threads, production settings): this checkout and
``--against DIR``, a checkout of another commit (``git worktree add DIR main``). A signed-in viewer asks
each page of each server in turn (the order of the two servers alternating), one request at a time, with
``Accept-Encoding: gzip`` and no validators, as a browser's first view; the first requests of each page
warm the servers (page cache, imports) and are not counted.

Pages: ``session`` and ``whole`` (page 1 of the session page and of the whole conversation) and, for the
long session, ``later`` and ``whole_later`` (the later pages' response, ``?page=2&through=9``). Per page
and server, the median of ``--repeat`` requests of ``first_byte_ms`` (the status line read) and
``response_ms`` (the whole body read); ``load_average`` is the machine's before and after. Without the
browser on the same cores this is the server's own time: what the browser bench's first byte is made of
before the machine's load multiplies it.

Prints one JSON object; the project and its blobs are deleted after.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("DEBUG", "false")  # production settings, as every bench of the service

from bench_browser_pages import bench_reader, largest_of, load_average, our_server, real_transcripts, stored
from djangobench import setup


def timed(base: str, path: str, cookie: str) -> tuple[float, float]:
    """(first byte, whole response) of one GET, in ms."""
    host, port = base.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    started = time.perf_counter()
    connection.request("GET", path, headers={"Cookie": cookie, "Accept-Encoding": "gzip"})
    response = connection.getresponse()
    first = time.perf_counter() - started
    response.read()
    whole = time.perf_counter() - started
    connection.close()
    if response.status != 200:
        raise RuntimeError(f"{path}: {response.status}")
    return first * 1000, whole * 1000


def measured(
    servers: dict[str, str], paths: dict[str, str], cookie: str, repeat: int, warm: int
) -> dict[tuple[str, str], list[tuple[float, float]]]:
    """Each page of each server, in turn (the servers' order alternating), after ``warm`` uncounted views."""
    for base in servers.values():
        for path in paths.values():
            for _ in range(warm):
                timed(base, path, cookie)
    runs: dict[tuple[str, str], list[tuple[float, float]]] = {(n, p): [] for n in servers for p in paths}
    for turn in range(repeat):
        for page, path in paths.items():
            order = list(servers.items()) if turn % 2 else list(reversed(servers.items()))
            for name, base in order:
                runs[(name, page)].append(timed(base, path, cookie))
    return runs


def page_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that choose the transcripts (``page_inputs``) and how they are stored."""
    parser.add_argument("--turns", type=int, default=25)
    parser.add_argument("--output-lines", type=int, default=420)
    parser.add_argument("--segments", type=int, default=5)


def page_inputs(turns: int, output_lines: int) -> dict[str, bytes]:
    """The transcripts whose pages are measured: the largest real one (``real``, when there is one)
    and the realistic long session (``long``)."""
    from bench_session_page import transcript

    inputs: dict[str, bytes] = {"long": transcript(turns, output_lines)}
    real = real_transcripts()
    return {"real": largest_of(real).read_bytes(), **inputs} if real else inputs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--against", type=Path, required=True, help="a checkout of another commit")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--warm", type=int, default=4)
    page_arguments(parser)
    args = parser.parse_args(argv)
    setup()
    from django.conf import settings

    settings.ALLOWED_HOSTS = ["*"]
    inputs = page_inputs(args.turns, args.output_lines)
    figures: dict[str, Any] = {"load_average": {"before": load_average()}}
    with bench_reader("first-byte") as (project, user, cookie):
        paths: dict[str, str] = {}
        for label, raw in inputs.items():
            single, last = stored(project, user, raw, args.segments)
            paths[f"{label} session"] = f"/p/{project.slug}/s/{single.pk}"
            paths[f"{label} whole"] = f"/p/{project.slug}/s/{last.pk}/conversation"
            if label == "long":
                paths[f"{label} later"] = f"/p/{project.slug}/s/{single.pk}?page=2&through=9"
                paths[f"{label} whole_later"] = f"/p/{project.slug}/s/{last.pk}/conversation?page=2&through=9"
        with our_server() as ours, our_server(args.against.resolve()) as against:
            servers = {"ours": ours, "against": against}
            runs = measured(servers, paths, f"{settings.SESSION_COOKIE_NAME}={cookie}", args.repeat, args.warm)
    for (name, page), found in runs.items():
        figures.setdefault(page, {})[name] = {
            "first_byte_ms": round(statistics.median(first for first, _ in found), 1),
            "response_ms": round(statistics.median(whole for _, whole in found), 1),
        }
    figures["load_average"]["after"] = load_average()
    json.dump(figures, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()

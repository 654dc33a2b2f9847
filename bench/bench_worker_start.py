"""A new web worker's first reader: the first view of a session page after a worker starts, against the
views after it; this checkout and, with ``--against DIR``, another commit's, in one run.

    .venv/bin/python bench/bench_worker_start.py [--repeat 3] [--against DIR] [--settle 8]

One gunicorn worker (config/gunicorn.py's settings, as production starts it) on the bench database
serves the largest real transcript's session page (``bench_browser_pages.py``'s, stored once; without
one, its realistic session's). ``ready_s``: from spawning gunicorn until ``/livez`` answers. In another
start, ``--settle`` seconds after it (an idle worker that has served nothing, not even a probe, as a
pod's other workers after a deploy): ``first_ms``, the signed-in viewer's first request of the page
(fresh connection, ``Accept-Encoding: gzip``, the whole body read), and ``next_ms``, the median of the
ten after it. Each figure is the median over ``--repeat`` rounds, the checkouts taking turns. A worker
that loads its views, URL names, templates and lexer tables as it starts (config/warmup.py) answers its
first reader about as fast as its next.

Prints one JSON object; the project and its blobs are deleted after.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from bench_browser_pages import ROOT, bench_reader, largest_of, our_server, real_transcripts, stored
from bench_first_byte import timed
from djangobench import setup


def ready_after(root: Path) -> float:
    """Seconds from spawning gunicorn until its worker answers ``/livez`` (after its warm-up, if any)."""
    spawned = time.perf_counter()
    with our_server(root, workers=1):
        return round(time.perf_counter() - spawned, 2)


def first_views(root: Path, path: str, cookie: str, settle: float) -> dict[str, float]:
    """The first view of a worker that has served nothing yet (not even a probe, as a pod's other
    workers), ``settle`` seconds after its start, and the median of the ten views after it."""
    spawned = time.perf_counter()
    with our_server(root, workers=1, probed=False) as base:
        time.sleep(max(0.0, settle - (time.perf_counter() - spawned)))
        first = timed(base, path, cookie)[1]
        after = [timed(base, path, cookie)[1] for _ in range(10)]
    return {"first_ms": round(first, 1), "next_ms": round(statistics.median(after), 1)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--settle", type=float, default=8.0, help="seconds after the start before the first view")
    parser.add_argument("--against", type=Path, help="a checkout of another commit (git worktree add DIR main)")
    args = parser.parse_args(argv)
    setup()
    from django.conf import settings

    transcripts = real_transcripts()
    if transcripts:
        raw = largest_of(transcripts).read_bytes()
    else:  # no real transcript here: the page bench's realistic session
        from bench_session_page import transcript

        raw = transcript(25, 420)
    roots = {"ours": ROOT, **({"against": args.against.resolve()} if args.against else {})}
    with bench_reader("worker-start") as (project, user, cookie):
        single, _ = stored(project, user, raw, 1)
        path = f"/p/{project.slug}/s/{single.pk}"
        header = f"{settings.SESSION_COOKIE_NAME}={cookie}"
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in roots}
        for _ in range(args.repeat):
            for name, root in roots.items():
                runs[name].append({"ready_s": ready_after(root), **first_views(root, path, header, args.settle)})
    figures: dict[str, Any] = {
        name: {key: round(statistics.median(run[key] for run in found), 2) for key in found[0]}
        for name, found in runs.items()
    }
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()

"""Where the server's time of a kept page view goes, in this process (no HTTP, no gunicorn).

    .venv/bin/python bench/bench_page_costs.py [--repeat 300] [--turns 25 --output-lines 420]

The pages of ``bench_first_byte.py`` (page 1 of the session page and of the whole conversation, and
the session page's later pages, of the largest real transcript and of the realistic long session),
asked by a signed-in viewer through Django's test client with production settings, each page warmed
first (kept, as the worker or an earlier reader leaves it). Per page: ``view_ms`` (wall) and
``view_cpu_ms`` (this thread's CPU time, which a busy machine inflates far less), the statements a
view sends (``statements``: those Django logs, plus ``COMMIT``; ``BEGIN`` and the connection's health
check are not among them), and ``parts_ms``, the wall time of each step, each one inclusive (a part
may hold another: ``sql`` is in the selects):

- ``sql``: every statement's round trip (sent, run, answered; the ORM's compiling not included);
- ``commit``: the tenant transaction's ``COMMIT`` (the access-log row's WAL flush);
- ``browser_session_and_user``, ``session_row``, ``pull_requests``, ``segments``: those reads, the
  ORM's compiling and the rows' conversion included;
- ``kept_body``: the cache read of the kept content; ``access_record``: the access-log upsert;
- ``frame``: the Django template of the page around the kept content; ``gzip``: splicing the kept
  compression into the response.

The parts are measured by wrapping those functions in this process (the view's code is unchanged
otherwise). Prints one JSON object; the project and its blobs are deleted after.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

os.environ.setdefault("DEBUG", "false")  # production settings, as every bench of the service

from bench_browser_pages import bench_reader, load_average, stored
from bench_first_byte import page_arguments, page_inputs
from djangobench import setup

PARTS = Counter[str]()


def timed_part(owner: Any, name: str, part: str) -> None:
    """Add the wall time of every call of ``owner.name`` to ``part``."""
    original = getattr(owner, name)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            PARTS[part] += time.perf_counter() - started

    setattr(owner, name, wrapper)


def instrument() -> None:
    import django.contrib.auth.middleware as auth_middleware
    from django.db.backends.base.base import BaseDatabaseWrapper
    from django.template.response import TemplateResponse

    from frontend import http_cache
    from frontend.session_page import page_cache
    from frontend.views import conversation_page, sessions

    timed_part(auth_middleware, "get_user", "browser_session_and_user")
    timed_part(BaseDatabaseWrapper, "commit", "commit")
    timed_part(sessions.SessionView, "get_session", "session_row")
    timed_part(sessions, "pull_requests_of_commits", "pull_requests")
    timed_part(conversation_page.stitch, "agent_session_chain_of", "segments")
    timed_part(page_cache, "cached", "kept_body")
    timed_part(sessions, "access_record", "access_record")
    timed_part(conversation_page, "access_records", "access_record")
    timed_part(TemplateResponse, "render", "frame")
    timed_part(http_cache, "framed", "gzip")
    timed_part(http_cache, "gzipped", "gzip")


@contextmanager
def statements() -> Iterator[list[str]]:
    """The statements sent meanwhile (their round trips added to the ``sql`` part)."""
    from django.db import connection

    sent: list[str] = []

    def wrapper(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        sent.append(sql.split(None, 1)[0].upper())
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            PARTS["sql"] += time.perf_counter() - started

    with connection.execute_wrapper(wrapper):
        yield sent


def costs(client: Any, path: str, repeat: int) -> dict[str, Any]:
    for _ in range(5):  # kept, imports done
        if client.get(path).status_code != 200:
            raise RuntimeError(f"{path}: not a 200")
    PARTS.clear()
    with statements() as sent:
        wall, cpu = time.perf_counter(), time.thread_time()
        for _ in range(repeat):
            client.get(path)
        cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
    executed = len(sent) // repeat
    return {
        "view_ms": round(wall / repeat * 1000, 2),
        "view_cpu_ms": round(cpu / repeat * 1000, 2),
        "statements": executed + 1,  # and the COMMIT, which is no execute
        "parts_ms": {part: round(seconds / repeat * 1000, 2) for part, seconds in PARTS.most_common()},
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=300)
    page_arguments(parser)
    args = parser.parse_args(argv)
    setup()
    instrument()
    from django.conf import settings
    from django.test import Client

    settings.ALLOWED_HOSTS = ["*"]
    inputs = page_inputs(args.turns, args.output_lines)
    figures: dict[str, Any] = {"load_average": {"before": load_average()}}
    with bench_reader("page-costs") as (project, user, cookie):
        client = Client(HTTP_ACCEPT_ENCODING="gzip")
        client.cookies[settings.SESSION_COOKIE_NAME] = cookie
        for label, raw in inputs.items():
            single, last = stored(project, user, raw, args.segments)
            pages = {
                "session": f"/p/{project.slug}/s/{single.pk}",
                "whole": f"/p/{project.slug}/s/{last.pk}/conversation",
                "later": f"/p/{project.slug}/s/{single.pk}?page=2&through=9",
            }
            for page, path in pages.items():
                figures[f"{label} {page}"] = costs(client, path, args.repeat)
    figures["load_average"]["after"] = load_average()
    json.dump(figures, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()

"""Worker and page time of each pathological transcript (tests/frontend/pathological.py).

    .venv/bin/python bench/bench_pathological.py [--repeat 3] [--only NAME …]

Each case is stored through the real ingest service and processed by the real worker code
(``worker_s``: blob read, parse, derive, content blob write, row update), then its session page
is requested through Django's test client (``page_s``, best of ``--repeat``, the Markdown memo
cleared before each request so nothing is served from an earlier render). ``parse_s`` is
``parse_transcript`` alone. tests/frontend/test_pathological.py asserts generous bounds on the
same cases; these are the real figures. Prints one JSON object; the project and its blobs are
deleted after.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from typing import Any

from djangobench import project_remove, setup, stored_session


def _best(repeat: int, work: Any) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - started)
    return round(best, 3), result


def measure(case: Any, project: Any, user: Any, client: Any, repeat: int) -> dict[str, Any]:
    from frontend.session_page.markdown import render_memo
    from projects.scoping import project_scope
    from sessionledger.core.formats import parse_transcript
    from sessions_app.models import Session
    from sessions_app.processing import session_process

    raw, subagents = case.build()
    parse_s, _ = _best(1, lambda: parse_transcript(raw, subagents=subagents))
    session = stored_session(project, user, raw)
    with project_scope(project):
        worker_s, _ = _best(1, lambda: session_process(session=session))
        session = Session.objects.get(pk=session.pk)
    url = f"/p/{project.slug}/s/{session.pk}?{case.query}"
    page_s, response = _best(repeat, lambda: (render_memo.cache_clear(), client.get(url))[1])
    return {
        "raw_bytes": len(raw),
        "status": session.status,
        "parse_s": parse_s,
        "worker_s": worker_s,
        "page_s": page_s,
        "page_status": response.status_code,
        "page_bytes": len(response.content),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="*", default=None, help="case names (default: all)")
    args = parser.parse_args(argv)
    setup()
    from django.conf import settings
    from django.test import Client

    from projects.models import Project, Role, User
    from projects.scoping import project_scope
    from projects.services import membership_add
    from tests.frontend.pathological import CASES

    settings.ALLOWED_HOSTS = ["*"]
    tag = uuid.uuid4().hex[:8]
    user = User.objects.create_user(f"bench-patho-{tag}@example.com")
    project = Project.objects.create(slug=f"bench-patho-{tag}", name="Bench pathological")
    with project_scope(project):
        membership_add(project=project, user=user, role=Role.ADMIN)
    client = Client()
    client.force_login(user)
    figures: dict[str, Any] = {"load_average": os.getloadavg()[0], "cases": {}}
    try:
        for case in CASES:
            if args.only is None or case.name in args.only:
                figures["cases"][case.name] = measure(case, project, user, client, args.repeat)
    finally:
        project_remove(project, user)
    json.dump(figures, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()

"""What hostile uploads cost: gzip member bombs, the CPU budget, oversized metadata
in list pages, and one project's flood against another project's session (fairness).

    .venv/bin/python bench/bench_hostile.py [--only gzip budget lists fairness] [--flood 40]

Prints one JSON object. ``gzip``: refusing 550,000 empty gzip members (the cap) against inflating
them without the cap (linear) and ``gzip.decompress`` on fewer of them (quadratic: the figure per
member grows with their number). ``budget``: how long a session over its CPU budget takes to fail.
``lists``: the bytes of a list item and of the detail of a session with 1 MiB of metadata.
``fairness``: a real Celery worker (prefork, 2 processes) on its own queue; one project's flood of
sessions is queued before one session of another project, and the other project's wait is
measured with fairness on (one slot per project) and off. The throwaway projects are deleted.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from bench_parse import synthetic
from djangobench import setup, stored_session

ROOT = Path(__file__).resolve().parents[1]


def timed(work: Any) -> float:
    started = time.perf_counter()
    with contextlib.suppress(Exception):  # the refusals are the point
        work()
    return round(time.perf_counter() - started, 6)


def gzip_figures() -> dict[str, Any]:
    from sessions_app import blobs

    bomb = gzip.compress(b"") * 550_000
    return {
        "bomb_bytes": len(bomb),
        "refused_with_the_member_cap_s": timed(lambda: list(blobs.gunzip_bounded(io.BytesIO(bomb), 10**9))),
        "inflated_without_the_cap_s": timed(
            lambda: list(blobs.gunzip_bounded(io.BytesIO(bomb), 10**9, max_members=10**6))
        ),
        "gzip_decompress_s": {n: timed(lambda n=n: gzip.decompress(bomb[: 20 * n])) for n in (5_000, 10_000, 20_000)},
    }


def budget_figures(project: Any, user: Any) -> dict[str, Any]:
    from django.conf import settings

    from projects.scoping import project_scope
    from sessions_app.models import Session
    from sessions_app.processing import session_process

    raw = synthetic(9 * 1024 * 1024)
    out: dict[str, Any] = {"raw_bytes": len(raw)}
    for budget in (0.2, 30):
        settings.SESSIONLEDGER_PROCESS_CPU_SECONDS = budget
        session = stored_session(project, user, raw)
        started, cpu = time.perf_counter(), time.process_time()
        with project_scope(project):
            session_process(session=session)
            status = Session.objects.get(pk=session.pk).status
        out[f"budget_{budget}s"] = {
            "status": status,
            "wall_s": round(time.perf_counter() - started, 3),
            "cpu_s": round(time.process_time() - cpu, 3),
        }
    return out


def list_figures(project: Any, user: Any) -> dict[str, Any]:
    from projects.scoping import project_scope
    from sessions_app.models import Session
    from sessions_app.serializers import SessionDetailSerializer, SessionSerializer

    session = stored_session(project, user, synthetic(64 * 1024))
    files = [f"src/module_{n:05d}/" + "x" * 80 for n in range(10_000)]  # ~1 MiB, the metadata cap
    with project_scope(project):
        Session.objects.filter(pk=session.pk).update(files_touched=files, commit_message="why " * 20_000)
        session = Session.objects.select_related("project", "author").get(pk=session.pk)
        item = len(json.dumps(SessionSerializer(session).data))
        detail = len(json.dumps(SessionDetailSerializer(session).data))
    return {"list_item_bytes": item, "detail_bytes": detail, "page_of_200_items_bytes": 200 * item}


def fairness_figures(project: Any, user: Any, other: Any, flood: int) -> dict[str, Any]:
    raw = synthetic(1536 * 1024)
    return {
        "flood_sessions": flood,
        "session_raw_bytes": len(raw),
        "fair_one_slot": _flood_run(project, user, other, raw, flood, slots=1),
        "unfair": _flood_run(project, user, other, raw, flood, slots=0),
    }


def _flood_run(project: Any, user: Any, other: Any, raw: bytes, flood: int, *, slots: int) -> dict[str, float]:
    from sessions_app.tasks import process_session

    queue = f"bench-fair-{uuid.uuid4().hex[:8]}"
    floods = [stored_session(project, user, raw) for _ in range(flood)]
    theirs = stored_session(other, user, raw)
    worker = _worker(queue, slots)
    try:
        started = time.monotonic()
        for session in [*floods, theirs]:
            process_session.apply_async(args=[str(session.pk)], queue=queue)
        other_done = _wait([theirs.pk], started)
        flood_done = _wait([s.pk for s in floods], started)
    finally:
        worker.terminate()
        worker.wait(timeout=60)
    return {"other_project_waited_s": other_done, "flood_done_after_s": flood_done}


def _worker(queue: str, slots: int) -> subprocess.Popen:
    env = {**os.environ, "SESSIONLEDGER_QUEUE": queue, "SESSIONLEDGER_PROJECT_CONCURRENCY": str(slots)}
    command = [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool", "prefork", "--concurrency", "2"]
    process = subprocess.Popen([*command, "-Q", queue, "--loglevel", "WARNING"], env=env, cwd=ROOT)
    from config.celery import app

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not app.control.ping(timeout=0.5):
        pass
    return process


def _wait(ids: list[Any], started: float, seconds: float = 900) -> float:
    from projects.scoping import unscoped
    from sessions_app.models import Session, Status

    while time.monotonic() - started < seconds:
        with unscoped():
            if not Session.objects.filter(pk__in=ids, status=Status.PROCESSING).exists():
                return round(time.monotonic() - started, 2)
        time.sleep(0.05)
    raise RuntimeError("sessions still processing")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", default=["gzip", "budget", "lists", "fairness"])
    parser.add_argument("--flood", type=int, default=40)
    args = parser.parse_args()
    setup()
    from projects.models import Project, Role, User
    from projects.scoping import project_scope, unscoped
    from projects.services import membership_add
    from sessions_app import blobs
    from sessions_app.models import Session

    tag = uuid.uuid4().hex[:8]
    user = User.objects.create_user(f"bench-hostile-{tag}@example.com")
    projects = [Project.objects.create(slug=f"bench-hostile-{tag}-{n}", name="Bench hostile") for n in (1, 2)]
    for project in projects:
        with project_scope(project):
            membership_add(project=project, user=user, role=Role.ADMIN)
    report: dict[str, Any] = {"load_average": os.getloadavg()}
    try:
        if "gzip" in args.only:
            report["gzip"] = gzip_figures()
        if "budget" in args.only:
            report["budget"] = budget_figures(projects[0], user)
        if "lists" in args.only:
            report["lists"] = list_figures(projects[0], user)
        if "fairness" in args.only:
            report["fairness"] = fairness_figures(projects[0], user, projects[1], args.flood)
    finally:
        with unscoped():
            rows = Session.objects.filter(project__in=projects)
            blobs.delete(*[key for s in rows for key in (s.raw_storage_key, s.content_storage_key) if key])
        for project in projects:
            project.delete()
        user.delete()
    report["load_average_after"] = os.getloadavg()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

"""What one worker core does: the whole ``process_session`` body per session, for capacity planning.

Sessions of a few sizes are stored through the real ingest service (blobs to the configured storage,
rows in the benchmark database), then processed one by one in this process exactly as the Celery task
body does it: read and gunzip the raw blob, parse, write the content blob, compute the counts, digest
and search vector, update the row. Celery's own overhead (a few ms per task on Redis) is not included.

    .venv/bin/python bench/bench_worker.py [--sizes-kb 400 1500 3000 9000] [--count 10]

Prints one JSON object: per size (the generator rounds up to whole turns) the median and p95 seconds
per session, sessions per day per core, and the average stored row size.
The throwaway project and its blobs are deleted afterwards.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import uuid

from bench_parse import synthetic
from djangobench import percentile, setup, stored_session


def _figures(project, user, size_kb: int, count: int) -> dict:
    from projects.scoping import project_scope
    from sessions_app.models import Session, Status
    from sessions_app.processing import session_process

    raw = synthetic(size_kb * 1024)
    sessions = [stored_session(project, user, raw) for _ in range(count + 1)]  # the first is a warm-up
    timings = []
    for n, session in enumerate(sessions):
        started = time.perf_counter()
        with project_scope(project):
            session_process(session=session)
        if n:
            timings.append(time.perf_counter() - started)
    ids = [s.pk for s in sessions]
    with project_scope(project):
        done = Session.objects.filter(pk__in=ids, status=Status.COMPLETE).count()
    median = statistics.median(timings)
    return {
        "raw_bytes": len(raw),
        "sessions": count,
        "completed": done - 1,
        "median_s": round(median, 4),
        "p95_s": round(percentile(timings, 0.95), 4),
        "sessions_per_day_per_core": int(86400 / median),
        "row_bytes": _row_bytes(ids),
    }


def _row_bytes(ids: list) -> int:
    """Average stored size of these sessions' rows (TOASTed summary, digest and search vector included)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT avg(pg_column_size(s.*)) FROM sessions_app_session s WHERE id = ANY(%s)", [ids])
        return int(cursor.fetchone()[0] or 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-kb", type=int, nargs="+", default=[400, 1500, 3000, 9000])
    parser.add_argument("--count", type=int, default=10)
    args = parser.parse_args()
    setup()
    from projects.models import Project, Role, User
    from projects.scoping import project_scope, unscoped
    from projects.services import membership_add
    from sessions_app import blobs
    from sessions_app.models import Session

    tag = uuid.uuid4().hex[:8]
    user = User.objects.create_user(f"bench-worker-{tag}@example.com")
    project = Project.objects.create(slug=f"bench-worker-{tag}", name="Bench worker")
    with project_scope(project):
        membership_add(project=project, user=user, role=Role.ADMIN)
    try:
        report = {f"{kb}kb": _figures(project, user, kb, args.count) for kb in args.sizes_kb}
    finally:
        with unscoped():
            keys = [
                key
                for s in Session.objects.filter(project=project)
                for key in (s.raw_storage_key, s.content_storage_key)
                if key
            ]
        blobs.delete(*keys)
        project.delete()
        user.delete()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

"""A project's export zip (sessions_app/export.py): how fast it is built and that memory stays flat.

    .venv/bin/python bench/bench_export.py [--sessions 2000] [--blob-kb 300]

A throwaway project gets ``--sessions`` rows (bench/seed_sessions.py), each naming one stored raw part
of ``--blob-kb`` KB of incompressible bytes (a gzipped transcript does not compress again). The zip is
then read to the end as the download would be, server side only (no network), twice: timed, and under
tracemalloc for the peak of Python's allocations. Prints the zip's size, seconds, MB/s, sessions/s and
the peak in MB. With blobs on local disk this is the server's ceiling; a real download is bound by the
bucket's and the client's bandwidth, and must end within gunicorn's ``--timeout`` (docs/deployment.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import tracemalloc
import uuid

from djangobench import setup
from seed_sessions import seed_sessions


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--blob-kb", type=int, default=300)
    args = parser.parse_args(argv)
    setup()
    from django.db import connection

    from projects.models import Project, User
    from projects.scoping import project_scope
    from sessions_app import blobs, deletion
    from sessions_app.export import project_zip

    tag = uuid.uuid4().hex[:8]
    user = User.objects.create_user(f"bench-export-{tag}@example.com")
    project = Project.objects.create(slug=f"bench-export-{tag}", name="Bench export")
    key = f"bench-export-{tag}/raw.jsonl.gz"
    blobs.put(key, os.urandom(args.blob_kb * 1024))
    try:
        with connection.cursor() as cursor:
            seed_sessions(cursor, project_id=project.pk, author_ids=[user.pk], start=1, stop=args.sessions)
            cursor.execute(
                "UPDATE sessions_app_session SET raw_storage_key = %s WHERE project_id = %s", [key, project.pk]
            )

        def read() -> int:
            with project_scope(project):
                return sum(len(chunk) for chunk in project_zip(project))

        started = time.perf_counter()
        size = read()
        seconds = time.perf_counter() - started
        tracemalloc.start()
        read()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    finally:
        deletion.project_delete(project=project)
        user.delete()
    figures = {
        "sessions": args.sessions,
        "blob_kb": args.blob_kb,
        "zip_mb": round(size / 2**20, 1),
        "seconds": round(seconds, 2),
        "mb_per_s": round(size / 2**20 / seconds, 1),
        "sessions_per_s": round(args.sessions / seconds),
        "peak_traced_mb": round(peak / 2**20, 1),
    }
    json.dump(figures, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()

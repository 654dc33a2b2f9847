"""What one worker core does: the whole ``process_session`` body per session, for capacity planning.

Sessions of a few sizes are stored through the real ingest service (blobs to the configured storage,
rows in the benchmark database), then processed one by one in this process exactly as the Celery task
body does it: read and gunzip the raw blob, parse, write the content blob, compute the counts, digest
and search vector, update the row. Celery's own overhead (a few ms per task on Redis) is not included.

    .venv/bin/python bench/bench_worker.py [--sizes-kb 400 1500 3000 9000] [--count 10]

Prints one JSON object: per size (the generator rounds up to whole turns) the median and p95 seconds
per session, sessions per day per core, and the average stored row size.
The throwaway project and its blobs are deleted afterwards.

``--small`` adds the fixed cost on small segments (most checkpoint segments are small): for each real
transcript (tests/realfixtures.py; TranscriptBuilder ones of similar sizes when absent) ``session_process``
and the whole Celery task body (``process_session``: load, fairness slot, attempt count, scope,
processing, commit, then rendering the session's page 1 into the page cache — ``--no-page-warm`` turns
that off, to see what it costs) against two floors, all four measured in the same run, interleaved
round by round:

- ``floor_gunzip_parse``: gunzip + parse of the same bytes in memory — the CPU part alone;
- ``io_floor`` (``IoFloor``): what any worker must do at the least, by hand with the same storage
  backend and database: read the session's raw blob (``blobs.get``), gunzip + parse it, write a content
  blob of the task's size (``blobs.put``), and commit one UPDATE of the row's columns to their final
  values in one transaction (a plain connection with ``synchronous_commit=off``: the cheapest commit).

``commit_wait`` (with ``--small``): a small UPDATE of a session's row committed waiting for the WAL flush
and without (``projects.rls.lazy_commit``, which the task's two commits use), medians of 60 interleaved.

The io floor is the fair one for the task: a worker that skipped none of its irreducible steps —
it must read the blob, write the document and commit the row, each a round trip the parse floor
does not pay — cannot go below it, whereas gunzip + parse of a 10 KB segment is an order of
magnitude under any storage or database round trip, so a ratio to it mostly measures round trips.
What the io floor leaves out is what the task may be asked to justify: loading the row, the fairness
slot, the attempt count and the row's lock (each a round trip), the tenant settings, redaction, the digest, the search
vector's text, serialising and compressing the document (the floor writes ready bytes), and logging.
Its UPDATE writes the task's own values, including the tsvector, to a fresh ``processing`` row of the
same project, so the indexes and the insights trigger do the same work (docs/scaling.md, worker).
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


def _small_transcripts() -> dict[str, bytes]:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests import realfixtures

    if realfixtures.available():
        files = sorted(realfixtures.REAL_TRANSCRIPTS.glob("*.jsonl"), key=lambda p: p.stat().st_size)
        return {f"{p.stem}_{p.stat().st_size // 1024}kb": p.read_bytes() for p in files}
    from tests.client.transcript_builder import TranscriptBuilder

    made = {}
    for turns in (4, 15, 100):
        b = TranscriptBuilder(start="2026-02-10T09:00:00Z")
        for turn in range(turns):
            b.prompt(f"Turn {turn}: fix the parser").assistant_text("Looking at it.")
            b.new_response().tool_call("Bash", {"command": "pytest -q"}, result="12 passed\n" * 20)
            b.new_response().assistant_text("Done.").turn_end()
        raw = b.build()
        made[f"built_{len(raw) // 1024}kb"] = raw
    return made


FLOOR_COLUMNS = (
    "status", "processed_at", "message_count", "turn_count", "title", "summary", "files_touched", "message_uuids",
    "digest", "agent_version", "agent_session_id", "error", "search_text",
)  # fmt: skip


class IoFloor:
    """The irreducible I/O of one session, by hand: read its raw blob, gunzip + parse, write a content
    blob of the task's size, and one UPDATE of the row's columns (the task's own values, the search
    vector as the tsvector it computed) committed in one transaction on a plain connection as the
    table's owner (no ORM, no tenant settings), with ``synchronous_commit=off``: the cheapest commit.
    The row is a freshly ingested ``processing`` one, so the insights trigger and the indexes do the
    same work as for the task's UPDATE."""

    def __init__(self, reference) -> None:
        import psycopg
        from django.db import connection
        from psycopg.types.json import Jsonb

        from sessions_app import blobs

        self.content = blobs.get(reference.content_storage_key)  # the same bytes, so the same size
        params = connection.get_connection_params()
        params.pop("cursor_factory", None)
        params.pop("context", None)
        self.conn = psycopg.connect(**params, options="-c synchronous_commit=off")
        with self.conn.cursor() as cursor:
            cursor.execute(
                f"SELECT {', '.join(FLOOR_COLUMNS)}, search_vector::text FROM sessions_app_session WHERE id = %s",
                [reference.pk],
            )
            row = cursor.fetchone()
        self.conn.commit()
        assert row is not None
        json_columns = ("files_touched", "digest")
        self.values = [Jsonb(v) if c in json_columns else v for c, v in zip(FLOOR_COLUMNS, row, strict=False)]
        self.vector = row[-1]
        assignments = ", ".join(f"{column} = %s" for column in FLOOR_COLUMNS)
        self.sql = (
            f"UPDATE sessions_app_session SET {assignments}, content_storage_key = %s, search_vector = %s::tsvector"
            " WHERE id = %s AND status = 'processing'"
        )

    def run(self, session) -> None:
        import gzip

        from sessionledger.core.formats import parse_transcript
        from sessions_app import blobs

        parse_transcript(gzip.decompress(blobs.get(session.raw_storage_key)), agent=session.agent)
        key = blobs.content_key(session.project_id, session.pk)
        blobs.put(key, self.content)
        with self.conn.cursor() as cursor:
            cursor.execute(self.sql, [*self.values, key, self.vector, session.pk])
            assert cursor.rowcount == 1
        self.conn.commit()

    def close(self) -> None:
        self.conn.close()


def _small_figures(project, user, name: str, raw: bytes, count: int) -> dict:
    import gzip

    from projects.scoping import project_scope
    from sessionledger.core.formats import parse_transcript
    from sessions_app.models import Session
    from sessions_app.processing import session_process
    from sessions_app.tasks import process_session

    gz = gzip.compress(raw)
    direct = [stored_session(project, user, raw) for _ in range(count + 1)]
    tasked = [stored_session(project, user, raw) for _ in range(count + 1)]
    floored = [stored_session(project, user, raw) for _ in range(count + 1)]
    with project_scope(project):
        session_process(session=direct[0])  # the first round warms up; its result is the I/O floor's
        reference = Session.objects.get(pk=direct[0].pk)
    io_floor = IoFloor(reference)
    floor, io, body, task = [], [], [], []
    try:
        for n in range(count + 1):
            started = time.perf_counter()
            parse_transcript(gzip.decompress(gz), agent="claude-code")
            floor.append(time.perf_counter() - started)
            started = time.perf_counter()
            io_floor.run(floored[n])
            io.append(time.perf_counter() - started)
            if n:
                started = time.perf_counter()
                with project_scope(project):
                    session_process(session=direct[n])
                body.append(time.perf_counter() - started)
            started = time.perf_counter()
            process_session(str(tasked[n].pk))
            task.append(time.perf_counter() - started)
    finally:
        io_floor.close()
    floor, io, task = floor[1:], io[1:], task[1:]  # the first round warms up
    f, i = statistics.median(floor), statistics.median(io)
    b, t = statistics.median(body), statistics.median(task)
    return {
        "raw_bytes": len(raw),
        "content_bytes": len(io_floor.content),
        "floor_gunzip_parse_ms": round(f * 1000, 2),
        "io_floor_ms": round(i * 1000, 2),
        "session_process_ms": round(b * 1000, 2),
        "task_ms": round(t * 1000, 2),
        "task_p95_ms": round(percentile(task, 0.95) * 1000, 2),
        "ratio_session_process": round(b / f, 1),
        "ratio_task": round(t / f, 1),
        "ratio_session_process_io": round(b / i, 2),
        "ratio_task_io": round(t / i, 2),
        # best of N: less at the mercy of a shared machine's load spikes than the medians
        "floor_best_ms": round(min(floor) * 1000, 2),
        "io_floor_best_ms": round(min(io) * 1000, 2),
        "task_best_ms": round(min(task) * 1000, 2),
        "ratio_task_best": round(min(task) / min(floor), 1),
        "ratio_task_io_best": round(min(task) / min(io), 2),
    }


def _commit_wait(session_id: object, repeat: int = 60) -> dict[str, float]:
    """One small committed UPDATE of a session's row, waiting for the WAL flush and not (``lazy_commit``),
    interleaved: what the task's two commits save by not waiting."""
    from django.db import transaction

    from projects.rls import lazy_commit
    from projects.scoping import unscoped
    from sessions_app.models import Session

    timings: dict[str, list[float]] = {"durable_ms": [], "lazy_ms": []}
    for _ in range(repeat):
        for name in timings:
            started = time.perf_counter()
            with unscoped(), transaction.atomic():
                if name == "lazy_ms":
                    lazy_commit()
                Session.objects.filter(pk=session_id).update(processing_attempts=0)
            timings[name].append(time.perf_counter() - started)
    return {name: round(statistics.median(values) * 1000, 3) for name, values in timings.items()}


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
    parser.add_argument("--small", action="store_true", help="also the fixed cost on small real transcripts")
    parser.add_argument("--small-only", action="store_true", help="only that")
    parser.add_argument(
        "--no-page-warm", action="store_true", help="page cache off: the task does not render the session's page 1"
    )
    args = parser.parse_args()
    setup()
    from django.conf import settings

    settings.CELERY_TASK_ALWAYS_EAGER = True  # a parked session's hand-off would otherwise need a broker
    if args.no_page_warm:
        settings.SESSIONLEDGER_PAGE_CACHE_SECONDS = 0
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
        report: dict = {}
        if args.small or args.small_only:
            report["small"] = {
                name: _small_figures(project, user, name, raw, max(args.count, 15))
                for name, raw in _small_transcripts().items()
            }
            with unscoped():
                row = Session.objects.filter(project=project).values_list("pk", flat=True).first()
            report["commit_wait"] = _commit_wait(row)
        if not args.small_only:
            report.update({f"{kb}kb": _figures(project, user, kb, args.count) for kb in args.sizes_kb})
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

"""Ingest and query figures: processing, upload latency, the list (prints one JSON object).

- processing: the worker's derive step (gunzip + parse + content document + gzip) on a ~3 MB
  realistic transcript, against the floor of gunzip + json.loads of the same bytes;
- ingest: request latency of a 10 MiB upload through the real view (Django test client);
- ingest_floor: an upload of a real-sized segment (30 KB, 150 KB) through the real view against its
  floor in the same run: a minimal DRF view, defined here and routed only in this process, that
  authenticates the token, checks the membership, stores the blob and inserts the row. Both go through
  the same middleware and test client; ``uploads_per_s_per_core`` is one client on one process
  (1 ÷ the median);
- list: the session list endpoint over 1,000,000 sessions (seeded once with INSERT … SELECT
  generate_series) against the bare SQL of the same filter.

    .venv/bin/python bench/bench_ingest.py [--sessions 1000000] [--repeat 5] [--only ingest_floor]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
import uuid

from bench_parse import best_of, floor, synthetic
from djangobench import percentile, setup


def processing_figures(repeat: int) -> dict:
    from sessionledger.core.formats import parse_transcript
    from sessions_app.blobs import gzip_json

    raw = synthetic(3 * 1024 * 1024)
    gz = gzip.compress(raw)

    def derive() -> None:
        parsed = parse_transcript(gzip.decompress(gz))
        gzip_json(parsed.to_document(session_id="bench"))

    floor_s, derive_s = best_of(repeat, lambda: floor(gz)), best_of(repeat, derive)
    return {
        "raw_bytes": len(raw),
        "floor_s": round(floor_s, 4),
        "process_s": round(derive_s, 4),
        "ratio": round(derive_s / floor_s, 2),
        "mb_per_s": round(len(raw) / derive_s / 1e6, 1),
    }


def bench_world():
    from projects.models import Membership, Project, Role, User
    from projects.services import token_create

    user = User.objects.filter(email="bench@example.com").first() or User.objects.create_user("bench@example.com")
    project, _ = Project.objects.get_or_create(slug="bench", defaults={"name": "Bench"})
    Membership.objects.get_or_create(project=project, user=user, defaults={"role": Role.ADMIN})
    _, secret = token_create(user=user, name="bench")
    return project, user, secret


def ingest_figures(project, secret: str, repeat: int) -> dict:
    from django.conf import settings
    from rest_framework.test import APIClient

    from tests.uploads import commit_hash, gz_file, metadata_for, upload

    settings.ALLOWED_HOSTS = ["*"]
    limit = settings.SESSIONLEDGER_MAX_RAW_BYTES
    raw = synthetic(limit)
    raw = raw[: raw.rfind(b"\n", 0, limit) + 1]  # just under the limit, complete lines
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    timings, part = [], gz_file(raw, "transcript.jsonl.gz")  # compressed once, as the client would
    for n in range(repeat):
        meta = metadata_for(raw, commit_hash=commit_hash(f"bench-ingest-{time.time()}-{n}"))
        part.seek(0)
        started = time.perf_counter()
        response = upload(client, project.slug, raw, meta, transcript_part=part)
        timings.append(time.perf_counter() - started)
        assert response.status_code == 202, response.content
    return {
        "raw_bytes": len(raw),
        "gzip_bytes": len(part.getvalue()),
        "p50_s": round(percentile(timings, 0.5), 3),
        "best_s": round(min(timings), 3),
    }


def _floor_view():
    """The floor of an upload: what any ingest must do, written as plainly as DRF allows."""
    from rest_framework.parsers import MultiPartParser
    from rest_framework.response import Response
    from rest_framework.views import APIView

    from projects.access import membership_for
    from projects.auth import BearerTokenAuthentication
    from projects.models import Project
    from projects.scoping import project_scope
    from sessions_app import blobs
    from sessions_app.models import Session

    class FloorIngest(APIView):
        authentication_classes = [BearerTokenAuthentication]
        parser_classes = [MultiPartParser]

        def post(self, request, project):
            project = Project.objects.get(slug=project)
            with project_scope(project):
                if membership_for(project=project, user=request.user, token=request.auth) is None:
                    return Response(status=404)
                session_id = uuid.uuid4()
                key = blobs.raw_key(project.pk, session_id)
                part = request.FILES["transcript"]
                blobs.put(key, part)
                metadata = json.loads(request.data["metadata"])
                session = Session.objects.create(
                    id=session_id,
                    project=project,
                    author=request.user,
                    kind=metadata["kind"],
                    commit_hash=metadata["commit_hash"],
                    agent_session_id=metadata["agent_session_id"],
                    raw_storage_key=key,
                    size_bytes=part.size,
                )
            return Response({"id": str(session.pk), "status": session.status}, status=202)

    return FloorIngest.as_view()


def _route_floor() -> None:
    """This module becomes the URLconf: the product's routes plus the floor's (nothing in the product)."""
    from django.conf import settings
    from django.urls import clear_url_caches, include, path

    module = sys.modules[__name__]
    module.urlpatterns = [path("floor/<slug:project>/sessions", _floor_view()), path("", include("config.urls"))]
    settings.ROOT_URLCONF = module
    clear_url_caches()


def ingest_floor_figures(secret: str, repeat: int, sizes_kb: list[int]) -> dict:
    """The real ingest view against its floor, alternating, on one fresh project per run."""
    from django.conf import settings
    from rest_framework.test import APIClient

    from config.celery import app
    from projects.models import Membership, Project, Role, User
    from tests.uploads import commit_hash, gz_file, metadata_for

    settings.ALLOWED_HOSTS = ["*"]
    _route_floor()
    app.control.purge()  # nothing consumes the bench's queue: backpressure counts only this run's tasks
    project = Project.objects.create(slug=f"bench-ingest-{uuid.uuid4().hex[:8]}", name="Bench ingest")
    Membership.objects.create(project=project, user=User.objects.get(email="bench@example.com"), role=Role.ADMIN)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    figures = {}
    try:
        for size_kb in sizes_kb:
            raw = synthetic(size_kb * 1024)
            raw = raw[: raw.rfind(b"\n", 0, size_kb * 1024) + 1]
            part = gz_file(raw, "transcript.jsonl.gz")
            timings: dict[str, list[float]] = {"api": [], "floor": []}
            for n in range(repeat + 1):
                for name, url in (("api", "/api/v1/projects"), ("floor", "/floor")):
                    meta = metadata_for(raw, commit_hash=commit_hash(f"floor-{uuid.uuid4()}"))
                    meta["agent_session_id"] = str(uuid.uuid4())
                    part.seek(0)
                    started = time.perf_counter()
                    response = client.post(
                        f"{url}/{project.slug}/sessions",
                        {"metadata": json.dumps(meta), "transcript": part},
                        format="multipart",
                    )
                    if n:  # the first of each is a warm-up
                        timings[name].append(time.perf_counter() - started)
                    assert response.status_code == 202, response.content
                app.control.purge()
            api, floor_ = percentile(timings["api"], 0.5), percentile(timings["floor"], 0.5)
            figures[f"{size_kb}kb"] = {
                "gzip_bytes": len(part.getvalue()),
                "api_p50_ms": round(api * 1000, 2),
                "floor_p50_ms": round(floor_ * 1000, 2),
                "ratio": round(api / floor_, 2),
                "uploads_per_s_per_core": round(1 / api, 1),
                "floor_uploads_per_s_per_core": round(1 / floor_, 1),
            }
    finally:
        project.delete()
    return figures


SEED_SQL = """
INSERT INTO sessions_app_session (id, project_id, kind, feature_branch, commit_hash, author_id, status,
  requested_status, agent, agent_version, agent_session_id, raw_storage_key, content_storage_key, subagents,
  size_bytes, raw_size_bytes, message_count, turn_count, title, summary, digest, files_touched, commit_message,
  patch_id, diff_stat, redaction, server_redaction, raw_sha256, processing_attempts, created_at, error)
SELECT gen_random_uuid(), %(project)s, 'checkpoint', 'branch-' || (g %% 500),
  md5(g::text || 'c') || substr(md5(g::text), 1, 8),
  %(author)s, 'complete', 'complete', 'claude-code', '2.1.39', md5(g::text), 'k', 'k', '[]', 1000, 5000, 40, 4,
  'Session ' || g, '', '{}', '[]', 'commit ' || g, '', '{}', '{}', '{}', '', 0,
  now() - (g || ' seconds')::interval, ''
FROM generate_series(%(start)s, %(stop)s) AS g
"""


def seed(project, user, total: int) -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM sessions_app_session WHERE project_id = %s", [project.pk])
        have = cursor.fetchone()[0]
        for start in range(have + 1, total + 1, 200_000):
            cursor.execute(
                SEED_SQL,
                {"project": project.pk, "author": user.pk, "start": start, "stop": min(total, start + 199_999)},
            )
        cursor.execute("ANALYZE sessions_app_session")
    return max(have, total)


def list_figures(project, secret: str, repeat: int) -> dict:
    from django.db import connection
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    sql = (
        "SELECT s.*, u.* FROM sessions_app_session s LEFT JOIN projects_user u ON u.id = s.author_id "
        "WHERE s.project_id = %s AND s.feature_branch = %s ORDER BY s.created_at DESC, s.id DESC LIMIT 51"
    )
    figures = {}
    for name, query, args in (("newest", "", None), ("branch", "?branch=branch-7", "branch-7")):
        api = _timings(repeat, lambda q=query: client.get(f"/api/v1/projects/{project.slug}/sessions{q}"))
        bare = _timings(repeat, lambda a=args: _bare(connection, sql, project.pk, a))
        figures[name] = {
            "api_p95_ms": round(percentile(api, 0.95) * 1000, 2),
            "sql_p95_ms": round(percentile(bare, 0.95) * 1000, 2),
            "ratio_p95": round(percentile(api, 0.95) / percentile(bare, 0.95), 2),
        }
    return figures


def _bare(connection, sql: str, project_id, branch) -> None:
    with connection.cursor() as cursor:
        if branch is None:
            cursor.execute(sql.replace("AND s.feature_branch = %s ", ""), [project_id])
        else:
            cursor.execute(sql, [project_id, branch])
        cursor.fetchall()


def _timings(repeat: int, work) -> list[float]:
    work()  # warm
    timings = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        timings.append(time.perf_counter() - started)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--floor-sizes-kb", type=int, nargs="+", default=[30, 150])
    parser.add_argument("--only", nargs="+", choices=["processing", "ingest", "ingest_floor", "list"])
    args = parser.parse_args()
    setup()
    from projects.scoping import unscoped

    with unscoped():
        project, user, secret = bench_world()
        wanted = set(args.only or ["processing", "ingest", "ingest_floor", "list"])
        report: dict = {}
        if "processing" in wanted:
            report["processing"] = processing_figures(5)
        if "ingest" in wanted:
            report["ingest_10mib"] = ingest_figures(project, secret, 3)
        if "ingest_floor" in wanted:
            report["ingest_floor"] = ingest_floor_figures(secret, max(args.repeat, 20), args.floor_sizes_kb)
        if "list" in wanted:
            sessions = seed(project, user, args.sessions)
            report["list"] = {"sessions": sessions, **list_figures(project, secret, args.repeat)}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

"""Ingest and query figures: processing, upload latency, the list (prints one JSON object).

- processing: the worker's derive step (gunzip + parse + content document + gzip) on a ~3 MB
  realistic transcript, against the floor of gunzip + json.loads of the same bytes;
- ingest: request latency of a 10 MiB upload through the real view (Django test client);
- list: the session list endpoint over 1,000,000 sessions (seeded once with INSERT … SELECT
  generate_series) against the bare SQL of the same filter.

    .venv/bin/python bench/bench_ingest.py [--sessions 1000000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import gzip
import json
import time

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


def _bench_world():
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
    args = parser.parse_args()
    setup()
    from projects.scoping import unscoped

    with unscoped():
        project, user, secret = _bench_world()
        report = {"processing": processing_figures(5), "ingest_10mib": ingest_figures(project, secret, 3)}
        report["list"] = {"sessions": seed(project, user, args.sessions), **list_figures(project, secret, args.repeat)}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

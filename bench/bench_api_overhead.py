"""The fixed cost of an API request: the session list (newest first) against its bare SQL, same run.

    .venv/bin/python bench/bench_api_overhead.py [--rows 10000] [--repeat 200]

A throwaway project gets ``--rows`` sessions (one INSERT … SELECT). Then, interleaved so the machine's
load drifts hit both alike:

- ``bare_sql``: the list query the API runs (captured from one API request), executed on a plain
  cursor as the connecting role, in autocommit: the floor of any list;
- ``api``: ``GET /api/v1/projects/{p}/sessions`` with a Bearer token through the whole Django stack
  in-process (middleware, authentication, membership, rate limit on Redis, the tenant transaction with
  row-level security, the query, serialisation, JSON);

and prints their medians and p95 in ms, the ratio of the API's p95 to the floor's, the overhead in ms,
and how many SQL statements and Redis commands one API request makes. DEBUG is off, as in production.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import uuid

from djangobench import percentile, setup


def seed(project, user, rows: int) -> None:
    from django.db import connection

    sql = """
    INSERT INTO sessions_app_session (id, project_id, kind, feature_branch, commit_hash, author_id, status,
      requested_status, agent, agent_version, agent_session_id, raw_storage_key, content_storage_key, subagents,
      size_bytes, raw_size_bytes, message_count, turn_count, title, summary, digest, files_touched, commit_message,
      patch_id, diff_stat, redaction, server_redaction, raw_sha256, processing_attempts, created_at, error)
    SELECT gen_random_uuid(), %(project)s, 'checkpoint', 'branch-' || (g %% 20), md5(g::text || %(tag)s)
      || substr(md5(g::text), 1, 8), %(author)s, 'complete', 'complete', 'claude-code', '2.1.39', '', 'k', 'k',
      '[]', 1000, 5000, 40, 4, 'Session ' || g, '', '{}', '[]', 'commit ' || g, '', '{}', '{}', '{}', '', 0,
      now() - (g || ' seconds')::interval, ''
    FROM generate_series(1, %(rows)s) AS g"""
    with connection.cursor() as cursor:
        cursor.execute(sql, {"project": project.pk, "author": user.pk, "rows": rows, "tag": project.slug})
        cursor.execute("ANALYZE sessions_app_session")


def figures(timings: list[float]) -> dict[str, float]:
    return {
        "median_ms": round(statistics.median(timings) * 1000, 3),
        "p95_ms": round(percentile(timings, 0.95) * 1000, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    setup()
    import redis
    from django.conf import settings
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from rest_framework.test import APIClient

    from projects.models import Project, Role, User
    from projects.scoping import project_scope
    from projects.services import membership_add, token_create

    settings.DEBUG = False
    settings.ALLOWED_HOSTS = ["*"]
    SimpleRateThrottle = __import__("rest_framework.throttling", fromlist=["SimpleRateThrottle"]).SimpleRateThrottle
    SimpleRateThrottle.THROTTLE_RATES = {**SimpleRateThrottle.THROTTLE_RATES, "query": "100000000/min"}
    tag = uuid.uuid4().hex[:8]
    user = User.objects.create_user(f"bench-api-{tag}@example.com")
    project = Project.objects.create(slug=f"bench-api-{tag}", name="Bench API")
    with project_scope(project):
        membership_add(project=project, user=user, role=Role.VIEWER)
    try:
        seed(project, user, args.rows)
        _, secret = token_create(user=user, name="bench")
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
        url = f"/api/v1/projects/{project.slug}/sessions"
        assert client.get(url).status_code == 200

        sent: list[str] = []
        real = redis.Redis.execute_command

        def spy(self, *a, **k):
            sent.append(str(a[0]))
            return real(self, *a, **k)

        redis.Redis.execute_command = spy
        with CaptureQueriesContext(connection) as captured:
            client.get(url)
        redis.Redis.execute_command = real
        statements = [q["sql"] for q in captured.captured_queries]
        query = next(sql for sql in statements if 'FROM "sessions_app_session"' in sql)

        def bare() -> None:
            with connection.cursor() as cursor:
                cursor.execute(query)
                cursor.fetchall()

        floor, api = [], []
        for _ in range(20):  # warm both
            bare()
            client.get(url)
        for _ in range(args.repeat):
            started = time.perf_counter()
            bare()
            floor.append(time.perf_counter() - started)
            started = time.perf_counter()
            response = client.get(url)
            api.append(time.perf_counter() - started)
            assert response.status_code == 200
        report = {
            "rows": args.rows,
            "repeat": args.repeat,
            "statements_per_request": len(statements),
            "redis_commands_per_request": sent,
            "bare_sql": figures(floor),
            "api_list_newest": figures(api),
        }
        report["ratio_p95"] = round(report["api_list_newest"]["p95_ms"] / report["bare_sql"]["p95_ms"], 1)
        report["overhead_median_ms"] = round(
            report["api_list_newest"]["median_ms"] - report["bare_sql"]["median_ms"], 2
        )
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM sessions_app_session WHERE project_id = %s", [project.pk])
        project.delete()
        user.delete()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

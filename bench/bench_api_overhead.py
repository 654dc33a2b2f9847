"""The fixed cost of an API request: session lookups against a framework floor and their bare SQL, same run.

    .venv/bin/python bench/bench_api_overhead.py [--rows 10000] [--repeat 200]

A throwaway project gets ``--rows`` sessions (one INSERT … SELECT). Then, interleaved so the machine's
load drifts hit both alike:

- ``bare_sql``: the list query the API runs (captured from one API request), executed on a plain
  cursor as the connecting role, in autocommit: the floor of any list;
- ``api``: ``GET /api/v1/projects/{p}/sessions`` with a Bearer token through the whole Django stack
  in-process (middleware, authentication, membership, rate limit on Redis, the tenant transaction with
  row-level security, the query, serialisation, JSON);

- ``floor``: a minimal authenticated DRF view, defined here and routed only in this process: Bearer
  token, project and membership, the tenant transaction, the same SQL on a cursor and the same JSON
  (built with the product's ``session_representation``; the page's ``next`` link is the string the API
  gave) — what any DRF endpoint returning this answer costs. The bench checks that both answers are equal;

for each lookup (the newest sessions, a branch, a commit prefix), and prints their medians and p95 in
ms, the API's ratio to the floor and to the bare SQL, and how many SQL statements and Redis commands
one API request makes. DEBUG is off, as in production.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
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


LOOKUPS = {"newest": "", "branch": "?branch=branch-7", "commit": "?commit={prefix}"}


def _route_floor(queries: dict[str, str], nexts: dict[str, str | None]) -> None:
    """This module becomes the URLconf: the product's routes plus ``floor/<project>/<lookup>``."""
    from django.conf import settings
    from django.db import connection
    from django.db.models import JSONField
    from django.urls import clear_url_caches, include, path
    from rest_framework.permissions import IsAuthenticated
    from rest_framework.response import Response
    from rest_framework.views import APIView

    from projects.access import membership_for
    from projects.auth import BearerTokenAuthentication
    from projects.models import Project
    from projects.scoping import project_scope
    from sessions_app.models import Session
    from sessions_app.serializers import session_representation

    json_columns = {field.name for field in Session._meta.concrete_fields if isinstance(field, JSONField)}

    class FloorLookup(APIView):
        authentication_classes = [BearerTokenAuthentication]
        permission_classes = [IsAuthenticated]

        def get(self, request, project, lookup):
            found = Project.objects.get(slug=project)
            with project_scope(found):
                if membership_for(project=found, user=request.user, token=request.auth) is None:
                    return Response(status=404)
                with connection.cursor() as cursor:
                    cursor.execute(queries[lookup])
                    names = [column.name for column in cursor.description]
                    rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
            for row in rows:  # PostgreSQL's json arrives as text on a plain cursor
                row.update((name, json.loads(row[name])) for name in json_columns & row.keys())
            results = [session_representation(row, found.slug) for row in rows[:50]]
            return Response({"next": nexts[lookup], "previous": None, "results": results})

    module = sys.modules[__name__]
    module.urlpatterns = [
        path("floor/<slug:project>/<str:lookup>", FloorLookup.as_view()),
        path("", include("config.urls")),
    ]
    settings.ROOT_URLCONF = module
    clear_url_caches()


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
    from sessions_app.models import Session

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
        with project_scope(project):
            prefix = Session.objects.filter(feature_branch="branch-3").values_list("commit_hash", flat=True)[0][:8]
        sent: list[str] = []
        real = redis.Redis.execute_command

        def spy(self, *a, **k):
            sent.append(str(a[0]))
            return real(self, *a, **k)

        queries, nexts, statements = {}, {}, {}
        for name, query in LOOKUPS.items():
            url = f"/api/v1/projects/{project.slug}/sessions{query.format(prefix=prefix)}"
            assert client.get(url).status_code == 200
            sent.clear()
            redis.Redis.execute_command = spy
            with CaptureQueriesContext(connection) as captured:
                answer = client.get(url).json()
            redis.Redis.execute_command = real
            statements[name] = [q["sql"] for q in captured.captured_queries]
            queries[name] = next(sql for sql in statements[name] if 'FROM "sessions_app_session"' in sql)
            nexts[name] = answer["next"]
            assert answer["results"], name
        _route_floor(queries, nexts)
        report = {"rows": args.rows, "repeat": args.repeat, "redis_commands_per_request": list(sent)}
        for name, query in LOOKUPS.items():
            url = f"/api/v1/projects/{project.slug}/sessions{query.format(prefix=prefix)}"
            floor_url = f"/floor/{project.slug}/{name}"
            mine, theirs = client.get(floor_url).json(), client.get(url).json()
            assert mine == theirs, f"the floor's {name} answer differs"

            def bare(sql=queries[name]) -> None:
                with connection.cursor() as cursor:
                    cursor.execute(sql)
                    cursor.fetchall()

            timings: dict[str, list[float]] = {"bare_sql": [], "floor": [], "api": []}
            work = {"bare_sql": bare, "floor": lambda u=floor_url: client.get(u), "api": lambda u=url: client.get(u)}
            for _ in range(20):  # warm all three
                for run in work.values():
                    run()
            for _ in range(args.repeat):
                for kind, run in work.items():
                    started = time.perf_counter()
                    run()
                    timings[kind].append(time.perf_counter() - started)
            result = {kind: figures(values) for kind, values in timings.items()}
            result["statements_per_request"] = len(statements[name])
            result["ratio_to_floor_median"] = round(result["api"]["median_ms"] / result["floor"]["median_ms"], 2)
            result["ratio_to_floor_p95"] = round(result["api"]["p95_ms"] / result["floor"]["p95_ms"], 2)
            result["ratio_to_sql_p95"] = round(result["api"]["p95_ms"] / result["bare_sql"]["p95_ms"], 1)
            report[name] = result
        newest = report["newest"]  # the figures earlier runs printed, for the table's history
        report.update(api_list_newest=newest["api"], bare_sql=newest["bare_sql"], ratio_p95=newest["ratio_to_sql_p95"])
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM sessions_app_session WHERE project_id = %s", [project.pk])
        project.delete()
        user.delete()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

"""Lookups at 1e4, 1e5 and 1e6 sessions under row-level security, each beside its floor.

    .venv/bin/python bench/bench_scale.py [--sizes 10000 100000 1000000] [--repeat 30] [--bulk-rows 90000]

One project (``bench-scale``) grows to each size in turn (``bench/seed_sessions.py``: one INSERT …
SELECT generate_series per step; the insights triggers and the secondary indexes are off while a
large step is written, then rebuilt — seeding is set-up, not the subject, and the bench project's
insights totals are not kept). At each size, for every row:

- ``floor``: the bare SQL as the owner (no row-level security), the best query by hand — the
  ids of the first page (``LIMIT 50``), newest first, using the index for the condition;
- ``query``: the SQL the API builds (``SessionFilter`` → list columns, the author joined, the page
  of 51), run as the web role under row-level security inside an open project scope — what the
  database does for the lookup (the context digest: ``context_digest`` in an open scope); and
  ``same_sql_as_owner``, that SQL without row-level security (the tenant set, for the search view), to
  tell the policy's cost from the cost of the list's columns and joins;
- ``scoped``: the same through the ORM with a project scope opened and closed around it, as a
  request does (adds BEGIN, set_config, RESET, COMMIT round trips);
- ``api``: the whole ``GET /api/v1/projects/bench-scale/sessions?…`` in-process (Bearer token,
  middleware, throttles, tenant transaction, serialisation), DEBUG off;

each as p50/p95 of ``--repeat`` runs, and ``<subject>_ratio`` = its p95 / floor p95. Search and files rows
add ``plain_under_rls``: their condition on the table itself, as the web role in one open scope — what
the API ran before it read the owner's view (docs/scaling.md "Search under row-level security"), the
whole project checked row by row unless a superuser had marked ``@@`` and ``?|`` LEAKPROOF (the
report's ``leakproof_marks`` says whether this database has them). A list's answer is
its columns, not its ids: every lookup row also carries ``floor_columns``, the bare SQL by hand that returns
the columns the API's list returns (author joined, as the owner), and ``query_ratio_columns`` against it.
Rows: commit 10-hex prefix, ``q`` matching one row, 2 % (twenty rarer words or'ed) and 10 %, files (one row,
one in a thousand), list newest, list ``?branch=``, the context digest of a branch (``context_digest``; its
floor is the two index reads it needs). Then bulk seeding: ``--bulk-rows`` more sessions in one statement with
the insights triggers off and on (rolled back both times), and their ratio; then VACUUM ANALYZE, as autovacuum
would, before the lookups. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("SESSIONLEDGER_QUERY_RATE", "1000000/min")  # the bench is one caller, many requests
os.environ.setdefault("DEBUG", "false")

from djangobench import percentile, setup
from seed_sessions import commit_of, seed_sessions

SLUG, SCRATCH = "bench-scale", "bench-scale-bulk"
TABLE = "sessions_app_session"
PAGE = 50
REBUILD_INDEXES_FROM = 200_000  # rows in one growth step above which indexes are rebuilt after
FLOOR_ORDER = f"ORDER BY captured_at DESC, id DESC LIMIT {PAGE}"


def timed(repeat: int, work: Callable[[], object]) -> dict[str, float]:
    work()  # warm: plans, caches
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        runs.append((time.perf_counter() - started) * 1000)
    return {"p50_ms": round(percentile(runs, 0.5), 3), "p95_ms": round(percentile(runs, 0.95), 3)}


def world(slug: str) -> tuple[Any, Any]:
    from projects.models import Membership, Project, Role, User

    project, _ = Project.objects.get_or_create(slug=slug, defaults={"name": slug})
    user = User.objects.filter(email=f"{slug}@bench.example").first() or User.objects.create_user(
        f"{slug}@bench.example"
    )
    Membership.objects.get_or_create(project=project, user=user, defaults={"role": Role.ADMIN})
    return project, user


def _count(cursor: Any, project: Any) -> int:
    cursor.execute(f"SELECT count(*) FROM {TABLE} WHERE project_id = %s", [project.pk])
    return cursor.fetchone()[0]


def grow(project: Any, user: Any, size: int, rebuild_from: int = REBUILD_INDEXES_FROM) -> dict[str, float]:
    """Seed ``project`` up to ``size`` sessions; returns the seconds it took."""
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        have = _count(cursor, project)
        if have >= size:
            return {"seeded": 0, "seed_s": 0.0}
        started = time.perf_counter()
        cursor.execute(f"ALTER TABLE {TABLE} DISABLE TRIGGER USER")
        cursor.execute("SET LOCAL maintenance_work_mem = '256MB'")
        indexes = _drop_indexes(cursor) if size - have >= rebuild_from else []
        seed_sessions(cursor, project_id=project.pk, author_ids=[user.pk], start=have + 1, stop=size)
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the foreign keys' checks, before DDL again
        for sql in indexes:
            cursor.execute(sql)
        cursor.execute(f"ALTER TABLE {TABLE} ENABLE TRIGGER USER")
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {TABLE}")
    return {"seeded": size - have, "seed_s": round(time.perf_counter() - started, 1)}


def _drop_indexes(cursor: Any) -> list[str]:
    """Drop the secondary, non-unique indexes of the sessions table; their CREATE statements."""
    cursor.execute(
        """SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) FROM pg_index AS i
           WHERE i.indrelid = %s::regclass AND NOT i.indisunique AND NOT i.indisprimary""",
        [TABLE],
    )
    found = cursor.fetchall()
    for name, _ in found:
        cursor.execute(f"DROP INDEX {name}")
    return [definition for _, definition in found]


def owner_sql(sql: str, params: list[Any]) -> Callable[[], object]:
    from django.db import connection

    def run() -> object:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()

    return run


def project_scope_of(project: Any) -> Any:
    from projects.scoping import project_scope

    return project_scope(project)


def scoped(project: Any, work: Callable[[], object]) -> Callable[[], object]:
    from projects.scoping import project_scope

    def run() -> object:
        with project_scope(project):
            return work()

    return run


def list_queryset(project: Any, query: dict[str, str]) -> Any:
    """What the API's list asks of the database for ``query`` (its first page)."""
    from django.http import QueryDict

    from sessions_app import selectors
    from sessions_app.filters import SessionFilter
    from sessions_app.serializers import ROW_COLUMNS

    data = QueryDict(mutable=True)
    for key, value in query.items():
        data[key] = value
    filters = SessionFilter(data, queryset=selectors.session_queryset(project=project))
    assert filters.is_valid(), filters.errors
    return filters.qs.order_by("-captured_at", "-id").values(*ROW_COLUMNS)[: PAGE + 1]


def listed(project: Any, query: dict[str, str]) -> Callable[[], object]:
    return lambda: list(list_queryset(project, query))


def in_one_scope(project: Any, repeat: int, work: Callable[[], object]) -> dict[str, float]:
    """``work`` timed inside one open project scope: the statement as the web role under row-level
    security, without the scope's own round trips (BEGIN, set_config, RESET, COMMIT)."""
    from projects.scoping import project_scope

    with project_scope(project):
        return timed(repeat, work)


def tenant_set_as_owner(project: Any, repeat: int, work: Callable[[], object]) -> dict[str, float]:
    """``work`` timed as the owner (no policy) with the tenant set, so the search view holds the project's rows."""
    from django.db import connection, transaction

    from projects.rls import SETTING

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT set_config(%s, %s, true)", [SETTING, str(project.pk)])
        return timed(repeat, work)


def api(client: Any, url: str, params: dict[str, str]) -> Callable[[], object]:
    def run() -> object:
        response = client.get(url, params)
        assert response.status_code == 200, response.content[:300]
        return response

    return run


def rows_at(project: Any, user: Any, size: int, repeat: int) -> dict[str, Any]:
    from rest_framework.test import APIClient

    from projects import services
    from sessions_app.context import context_digest

    client = APIClient()
    _, secret = services.token_create(user=user, name="bench")
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    url = f"/api/v1/projects/{SLUG}/sessions"
    rng = random.Random(size)
    pid = project.pk
    one = rng.randrange(1, size)
    prefix = commit_of(one)[:10]
    branch = f"feat/branch-{(size // 2) // 2000}"
    two_percent = " or ".join(f"b{bucket}" for bucket in range(1, 21))  # 20 of the thousand ``b<g % 1000>`` words
    cases: dict[str, tuple[str, list[Any], dict[str, str]]] = {
        "commit_prefix": (
            "commit_hash ~>=~ %s AND commit_hash ~<~ %s",
            [prefix, prefix + "g"],
            {"commit": prefix},
        ),
        "q_one_row": ("search_vector @@ websearch_to_tsquery('english', %s)", [f"u{one}"], {"q": f"u{one}"}),
        "q_2_percent": ("search_vector @@ websearch_to_tsquery('english', %s)", [two_percent], {"q": two_percent}),
        "q_10_percent": ("search_vector @@ websearch_to_tsquery('english', %s)", ["deadlock"], {"q": "deadlock"}),
        "files_one_row": ("files_touched ?| %s", [[f"src/only{one}.py"]], {"files": f"src/only{one}.py"}),
        "files_per_mille": ("files_touched ?| %s", [[f"src/mod{one % 1000}.py"]], {"files": f"src/mod{one % 1000}.py"}),
        "list_newest": ("TRUE", [], {}),
        "list_branch": ("feature_branch = %s", [branch], {"branch": branch}),
    }
    out: dict[str, Any] = {}
    for name, (condition, params, query) in cases.items():
        floor = timed(
            repeat,
            owner_sql(f"SELECT id FROM {TABLE} WHERE project_id = %s AND {condition} {FLOOR_ORDER}", [pid, *params]),
        )
        with_scope = timed(repeat, scoped(project, listed(project, query)))
        with project_scope_of(project):
            sql, sql_params = list_queryset(project, query).query.sql_with_params()
        statement = in_one_scope(project, repeat, owner_sql(sql, list(sql_params)))
        whole = timed(repeat, api(client, url, query))
        out[name] = _row(floor, statement, with_scope, whole)
        out[name]["same_sql_as_owner"] = tenant_set_as_owner(project, repeat, owner_sql(sql, list(sql_params)))
        # a list's answer is its rows' columns, not their ids: the bare SQL that returns them
        columns = timed(repeat, owner_sql(list_columns_sql(condition), [pid, *params]))
        out[name]["floor_columns"] = columns
        out[name]["query_ratio_columns"] = round(out[name]["query"]["p95_ms"] / max(columns["p95_ms"], 0.001), 2)
        if name.startswith(("q_", "files_")):  # the condition on the table under the policy, as before the view
            plain = in_one_scope(project, repeat, owner_sql(list_columns_sql(condition), [pid, *params]))
            out[name]["plain_under_rls"] = plain
            out[name]["plain_under_rls_ratio"] = round(plain["p95_ms"] / max(floor["p95_ms"], 0.001), 2)
    useful = "status IN ('complete', 'rejected', 'abandoned')"
    context_floor = f"""SELECT id, digest FROM {TABLE} WHERE project_id = %s AND feature_branch = %s AND {useful}
        ORDER BY captured_at DESC, id DESC LIMIT 20"""
    recent_floor = (
        f"SELECT id, digest FROM {TABLE} WHERE project_id = %s AND {useful} ORDER BY captured_at DESC, id DESC LIMIT 20"
    )
    floor_context = timed(repeat, lambda: (owner_sql(context_floor, [pid, branch])(), owner_sql(recent_floor, [pid])()))
    # The full digest (with prompts), as measured before the short one became the default
    digest = lambda: context_digest(project=project, branch=branch, prompts=True)  # noqa: E731
    statement_context = in_one_scope(project, repeat, digest)
    db_context = timed(repeat, scoped(project, digest))
    api_context = timed(repeat, api(client, f"/api/v1/projects/{SLUG}/context", {"branch": branch, "prompts": "1"}))
    out["context_by_branch"] = _row(floor_context, statement_context, db_context, api_context)
    return out


def list_columns_sql(condition: str) -> str:
    """The list's page by hand, as the owner: the columns the API's list returns (the author's e-mail
    joined), newest first through the index for ``condition``, one row more than a page (the cursor's)."""
    from sessions_app.models import Session
    from sessions_app.serializers import ROW_COLUMNS

    names = [Session._meta.get_field(name).column for name in ROW_COLUMNS if "__" not in name]
    return (
        f"SELECT {', '.join(f's.{name}' for name in names)}, u.email FROM {TABLE} AS s"
        " LEFT JOIN projects_user AS u ON u.id = s.author_id"
        f" WHERE s.project_id = %s AND {condition} ORDER BY s.captured_at DESC, s.id DESC LIMIT {PAGE + 1}"
    )


def _row(floor: dict[str, float], *subjects: dict[str, float]) -> dict[str, Any]:
    base = max(floor["p95_ms"], 0.001)
    row: dict[str, Any] = {"floor": floor}
    for name, figures in zip(("query", "scoped", "api"), subjects, strict=True):
        row[name] = figures
        row[f"{name}_ratio"] = round(figures["p95_ms"] / base, 2)
    return row


def bulk(rows: int) -> dict[str, Any]:
    """``rows`` more sessions in one INSERT … SELECT, insights triggers off then on (rolled back)."""
    from django.db import connection, transaction

    project, user = world(SCRATCH)
    figures = {}
    for label in ("triggers_off", "triggers_on", "triggers_off_again", "triggers_on_again"):
        with transaction.atomic(), connection.cursor() as cursor:
            if "off" in label:
                cursor.execute(f"ALTER TABLE {TABLE} DISABLE TRIGGER USER")
            started = time.perf_counter()
            seed_sessions(cursor, project_id=project.pk, author_ids=[user.pk], start=1, stop=rows)
            figures[label] = round(time.perf_counter() - started, 2)
            transaction.set_rollback(True)
    off = min(figures["triggers_off"], figures["triggers_off_again"])
    on = min(figures["triggers_on"], figures["triggers_on_again"])
    return {"rows": rows, "seconds": figures, "ratio": round(on / off, 2), "target_ratio": 2}


def leakproof_marks() -> bool:
    """Whether a superuser marked the functions of ``@@`` and ``?|`` LEAKPROOF in this database."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT bool_and(proleakproof) FROM pg_proc WHERE proname IN ('ts_match_vq', 'jsonb_exists_any')"
        )
        return bool(cursor.fetchone()[0])


def steady() -> None:
    """As autovacuum leaves a table between bursts: no dead rows from the rolled-back bulk seeding,
    the GIN indexes' pending lists merged (a search reads a pending list linearly)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM ANALYZE {TABLE}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--bulk-rows", type=int, default=90_000)
    parser.add_argument(
        "--rebuild-from", type=int, default=REBUILD_INDEXES_FROM, help="growth steps this large rebuild the indexes"
    )
    args = parser.parse_args(argv)
    setup()
    from django.conf import settings

    from projects.scoping import unscoped

    settings.ALLOWED_HOSTS = ["*"]
    settings.DEBUG = False
    report: dict[str, Any] = {"target_ratio": 3, "load_before": list(os.getloadavg()), "sizes": {}}
    report["leakproof_marks"] = leakproof_marks()
    with unscoped():
        project, user = world(SLUG)
    for size in sorted(args.sizes):
        with unscoped():
            seeding = grow(project, user, size, args.rebuild_from)
            bulk_seeding = bulk(args.bulk_rows) if args.bulk_rows else None
            steady()
            figures = rows_at(project, user, size, args.repeat)
            figures["bulk_seeding"] = bulk_seeding
        report["sizes"][str(size)] = {**seeding, "rows": figures, "load": list(os.getloadavg())}
        print(json.dumps({str(size): report["sizes"][str(size)]}), file=sys.stderr, flush=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

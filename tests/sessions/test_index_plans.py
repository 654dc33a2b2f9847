"""At 100,000 sessions, search, commit prefixes and the files filter use an index as the web role.

Under the ``tenant_isolation`` policy PostgreSQL only uses a condition inside an index scan if the
condition is leakproof; otherwise it reads every row of the project and filters them after the
policy. Search and files read the owner's view instead (docs/scaling.md "Search under row-level
security"), which needs no superuser: the suite's database owner has none (``config/localstack.py``).
These tests read the plans — no timings — of the very querysets the API and the pages build, run
inside a project scope (the web role, row-level security on) over rows seeded in one INSERT …
SELECT generate_series, and compare their answers with the plain condition's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.conf import settings
from django.db import connection, transaction
from django.http import QueryDict
from django_scopes import scopes_disabled

from projects.models import Project, Role, User
from projects.scoping import project_scope
from sessions_app import selectors
from sessions_app.context import candidates_statement, context_candidates
from sessions_app.filters import SessionFilter
from tests.factories import ProjectFactory, make_member
from tests.seeding import commit_of, seed_sessions

ROWS = 100_000
TABLE = "sessions_app_session"
PLAIN = {  # each filter's condition as it is, on the table, as the owner (no row-level security, no view)
    "q=u4242": ("search_vector @@ websearch_to_tsquery('english', %s)", "u4242"),
    "q=deadlock": ("search_vector @@ websearch_to_tsquery('english', %s)", "deadlock"),
    "files=src/mod17.py": ("files_touched ?| %s", ["src/mod17.py"]),
}


def _nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [plan, *(node for child in plan.get("Plans", []) for node in _nodes(child))]


def _plan(queryset) -> list[dict[str, Any]]:
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}", params)
        [[document]] = cursor.fetchall()
    document = json.loads(document) if isinstance(document, str) else document
    return _nodes(document[0]["Plan"])


def _session_scans(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        node for node in nodes if node.get("Relation Name") == TABLE or node.get("Index Name", "").startswith("session")
    ]


def _sessions_scanned(nodes: list[dict[str, Any]]) -> bool:
    return any(n["Node Type"] == "Seq Scan" and n.get("Relation Name") == TABLE for n in nodes)


def _assert_index_finds(queryset, operator: str) -> None:
    """No sequential scan of the sessions, and ``operator`` is an index condition (not a filter
    applied to every row an index walk returns)."""
    nodes = _plan(queryset)
    assert not _sessions_scanned(nodes), (str(queryset.query)[-300:], json.dumps(nodes, indent=1)[:4000])
    conditions = " ".join(node.get("Index Cond", "") for node in _session_scans(nodes))
    assert operator in conditions, json.dumps(nodes, indent=1)[:4000]


@dataclass(frozen=True)
class Seeded:
    project: Project
    member: User


@pytest.fixture(scope="module")
def seeded(django_db_setup, django_db_blocker) -> Iterator[Seeded]:
    """One project of ``ROWS`` sessions for the module's tests, seeded once (half a minute on a loaded
    box) in a transaction of its own that is rolled back afterwards; each test runs in a savepoint in it."""
    with django_db_blocker.unblock(), transaction.atomic():
        with scopes_disabled():
            project = ProjectFactory(slug="acme-api")
            member = make_member(project, Role.MEMBER, email="mallory@example.com")
        with connection.cursor() as cursor:
            # Seeding measures nothing here: the insights rollup is skipped (the transaction is rolled back).
            cursor.execute(f"ALTER TABLE {TABLE} DISABLE TRIGGER USER")
            seed_sessions(cursor, project_id=project.pk, author_ids=[member.pk], start=1, stop=ROWS)
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the foreign keys' checks, before ALTER TABLE again
            cursor.execute(f"ALTER TABLE {TABLE} ENABLE TRIGGER USER")
            # every table the lists join, analysed now rather than whenever autovacuum gets to them: the plans
            # must not depend on the timing of a full run
            cursor.execute(f"ANALYZE {TABLE}, projects_project, projects_user")
        yield Seeded(project, member)
        transaction.set_rollback(True)


def _listed(seeded: Seeded, query: str):
    """The API list's queryset for ``query`` (the pages build theirs with the same filter)."""
    filters = SessionFilter(QueryDict(query), queryset=selectors.session_queryset(project=seeded.project))
    assert filters.is_valid(), filters.errors
    return filters.qs.order_by("-captured_at", "-id")[:51]


def _plain_answers(seeded: Seeded) -> dict[str, list[Any]]:
    """Each of ``PLAIN``'s ids, newest first, by its condition on the table as the owner."""
    answers = {}
    with connection.cursor() as cursor:
        for query, (condition, value) in PLAIN.items():
            cursor.execute(
                f"SELECT id FROM {TABLE} WHERE project_id = %s AND {condition} ORDER BY captured_at DESC, id DESC",
                [seeded.project.pk, value],
            )
            answers[query] = [row[0] for row in cursor.fetchall()]
    return answers


def test_search_commit_prefix_and_files_use_an_index_as_the_web_role_and_answer_right(db: None, seeded: Seeded) -> None:
    plain = _plain_answers(seeded)
    assert [len(ids) for ids in plain.values()] == [1, ROWS // 10, ROWS // 1000]
    with project_scope(seeded.project):
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_user, rolsuper FROM pg_roles WHERE rolname = session_user")
            # the web role, under row-level security, of a connecting owner that is no superuser
            assert cursor.fetchone() == (settings.DATABASE_WEB_ROLE, False)
        _assert_index_finds(_listed(seeded, "q=u4242"), "@@")
        _assert_index_finds(_listed(seeded, "q=u4242 test"), "@@")
        _assert_index_finds(_listed(seeded, f"commit={commit_of(4242)[:10]}"), "~>=~")
        _assert_index_finds(_listed(seeded, "files=src/only4242.py"), "?|")
        _assert_index_finds(_listed(seeded, "files=src/only4242.py&files=src/only17.py"), "?|")
        _assert_index_finds(selectors.sessions_for_commit(project=seeded.project, sha=commit_of(4242)[:12]), "~>=~")
        snippets = selectors.session_list_with_snippets(
            selectors.session_list_queryset(project=seeded.project), "u4242"
        )
        _assert_index_finds(snippets.order_by("-captured_at", "-id")[:51], "@@")
        # and the answers are right: one session each
        assert [s.commit_hash for s in _listed(seeded, f"commit={commit_of(4242)[:10]}")] == [commit_of(4242)]
        assert [s.title for s in _listed(seeded, "q=u4242")] == ["Session 4242"]
        assert [s.title for s in _listed(seeded, "files=src/only4242.py&files=src/only17.py")] == [
            "Session 17",
            "Session 4242",
        ]
        # every match, not a page: the view's ids are the plain condition's
        for query, ids in plain.items():
            filters = SessionFilter(QueryDict(query), queryset=selectors.session_queryset(project=seeded.project))
            assert list(filters.qs.order_by("-captured_at", "-id").values_list("pk", flat=True)) == ids, query


def test_newest_first_lists_and_the_context_digest_walk_an_index(db: None, seeded: Seeded) -> None:
    with project_scope(seeded.project):
        for query in ("", "branch=main", "branch=feat/branch-7", "q=deadlock", "since=2026-01-01T00:00:00Z"):
            nodes = _plan(_listed(seeded, query))
            # the sessions only: once the joined one-row project and user tables have been analysed, a
            # sequential scan of those is the right plan
            assert not _sessions_scanned(nodes), (query, json.dumps(nodes, indent=1)[:4000])
            # a page is never worth parallel workers' start (they cost more than the page: docs/scaling.md)
            assert not [n for n in nodes if n["Node Type"].startswith("Gather")], (query, json.dumps(nodes)[:4000])
        # a word in one row in ten: each walked row is checked as it is read, and only the matches are
        # looked up in the owner's view — not every walked row
        walk = [n for n in _plan(_listed(seeded, "q=deadlock")) if n.get("Index Name") == "session_project_recent"]
        assert walk and "@@" in walk[0].get("Filter", ""), json.dumps(walk, indent=1)[:4000]
        rare_files = context_candidates(project=seeded.project, branch="feat/branch-7", files=["src/only4242.py"])
        assert [c.reason for c in rare_files].count("same files") == 1
        # the digest's one statement: each group an index read (branch, files, recent), never a scan
        sql, params, _ = candidates_statement(project=seeded.project, branch="feat/branch-7", files=["src/only4242.py"])
        with connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}", params)
            [[document]] = cursor.fetchall()
        nodes = _nodes((json.loads(document) if isinstance(document, str) else document)[0]["Plan"])
        assert not _sessions_scanned(nodes), json.dumps(nodes, indent=1)[:4000]
        used = {n.get("Index Name") for n in nodes}
        assert {"session_branch_recent", "session_files", "session_project_recent"} <= used, used

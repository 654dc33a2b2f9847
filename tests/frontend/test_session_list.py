"""``/p/{project}/``: filters in the URL, keyset pages, one query for the rows."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django_scopes import scopes_disabled

from sessions_app.models import Session
from tests.client.transcript_builder import TranscriptBuilder

pytestmark = pytest.mark.django_db


def _raw(prompt: str, reply: str = "Done.") -> bytes:
    return TranscriptBuilder().prompt(prompt).assistant_text(reply).turn_end().build()


def _age(session: Session, day: int) -> None:
    with scopes_disabled():
        Session.objects.filter(pk=session.pk).update(captured_at=datetime(2026, 2, day, 12, tzinfo=UTC))


@pytest.fixture
def sessions(world, make_session) -> dict[str, Session]:
    made = {
        "parser": make_session(
            world.project,
            world.member,
            _raw("Rewrite the tokenizer of the parser"),
            seed="p",
            feature_branch="feature/parser",
            commit_message="Rewrite tokenizer",
        ),
        "docs": make_session(
            world.project,
            world.admin,
            _raw("Update the installation docs"),
            seed="d",
            feature_branch="docs",
            commit_message="Docs for install",
        ),
        "task": make_session(
            world.project,
            world.admin,
            _raw("Investigate flaky upload test"),
            seed="t",
            kind="task",
            task_id="SL-42",
            commit_hash=None,
            status="rejected",
            feature_branch="docs",
        ),
    }
    for day, session in zip((10, 11, 12), made.values(), strict=True):
        _age(session, day)
    return made


def _titles(response) -> list[str]:
    return [s.title for s in response.context["page"].items]


def _get(client, world, query: str = ""):
    client.force_login(world.viewer)
    response = client.get(f"/p/{world.project.slug}/{query}")
    assert response.status_code == 200
    return response


def test_lists_sessions_newest_first_with_their_columns(client, world, sessions) -> None:
    response = _get(client, world)
    assert _titles(response) == [
        "Investigate flaky upload test",
        "Update the installation docs",
        "Rewrite the tokenizer of the parser",
    ]
    html = response.content.decode()
    for text in ("SL-42", sessions["parser"].commit_hash[:7], "feature/parser", "mallory", "rejected", "Turns"):
        assert text in html
    assert f'href="/p/acme-api/s/{sessions["docs"].pk}"' in html
    assert 'href="/p/acme-api/b/feature/parser"' in html


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("?branch=docs", {"docs", "task"}),
        ("?author=mallory@example.com", {"parser"}),
        ("?kind=task", {"task"}),
        ("?status=rejected", {"task"}),
        ("?task=SL-42", {"task"}),
        ("?since=2026-02-11", {"docs", "task"}),
        ("?until=2026-02-11", {"parser", "docs"}),
        ("?since=2026-02-11&until=2026-02-11", {"docs"}),
        ("?since=2026-02-11T13:00:00Z", {"task"}),
        ("?q=tokenizer", {"parser"}),
        ("?q=installation&branch=docs", {"docs"}),
    ],
)
def test_filters_narrow_the_list(client, world, sessions, query: str, expected: set[str]) -> None:
    by_title = {s.title: name for name, s in sessions.items()}
    assert {by_title[t] for t in _titles(_get(client, world, query))} == expected


def test_commit_filter_takes_a_prefix(client, world, sessions) -> None:
    prefix = sessions["docs"].commit_hash[:9]
    assert _titles(_get(client, world, f"?commit={prefix}")) == ["Update the installation docs"]


@pytest.mark.parametrize("commit", ["xyz", "abc123"])
def test_a_malformed_commit_filter_shows_its_error_instead_of_every_session(client, world, sessions, commit) -> None:
    response = _get(client, world, f"?commit={commit}")
    html = response.content.decode()
    assert "7 to 40 hexadecimal characters" in html
    assert _titles(response) == []
    assert "Correct the filter above" in html


def test_full_text_search_shows_a_highlighted_snippet(client, world, sessions) -> None:
    html = _get(client, world, "?q=tokenizer").content.decode()
    assert "<mark>tokenizer</mark>" in html


def test_snippets_escape_transcript_markup(client, world, make_session) -> None:
    make_session(world.project, world.member, _raw("<script>alert(1)</script> tokenizer <b>bold</b>"), seed="x")
    html = _get(client, world, "?q=tokenizer").content.decode()
    assert "<script>alert(1)" not in html and "<b>bold</b>" not in html
    assert "&lt;b&gt;bold&lt;/b&gt;" in html


def test_filters_are_kept_in_the_form_so_the_url_can_be_shared(client, world, sessions) -> None:
    html = _get(client, world, "?branch=docs&kind=task&q=flaky&since=2026-02-01").content.decode()
    assert 'name="branch" value="docs"' in html and 'value="task" selected' in html
    assert 'value="flaky"' in html and 'value="2026-02-01"' in html


def test_keyset_pages_walk_older_and_back_newer(client, world, sessions) -> None:
    first = _get(client, world, "?limit=2")
    assert _titles(first) == ["Investigate flaky upload test", "Update the installation docs"]
    older = first.context["page"].older
    assert older and first.context["page"].newer is None
    second = _get(client, world, f"?limit=2&cursor={older}")
    assert _titles(second) == ["Rewrite the tokenizer of the parser"]
    assert second.context["page"].older is None
    back = _get(client, world, f"?limit=2&cursor={second.context['page'].newer}")
    assert _titles(back) == _titles(first)


def test_page_links_keep_the_filters(client, world, sessions) -> None:
    html = _get(client, world, "?branch=docs&limit=1").content.decode()
    assert "branch=docs&amp;limit=1&amp;cursor=" in html


def test_a_tampered_cursor_means_the_first_page(client, world, sessions) -> None:
    assert len(_titles(_get(client, world, "?cursor=bm9wZQ"))) == 3


def test_no_sessions_yet_explains_how_to_start(client, world) -> None:
    assert "sessionledger init" in _get(client, world).content.decode()


def test_another_projects_sessions_never_show(client, world, make_session, sessions) -> None:
    make_session(world.other_project, world.other_admin, _raw("Globex secret plan"), seed="g")
    assert "Globex secret plan" not in _get(client, world).content.decode()


def test_outsider_gets_404_and_anonymous_is_sent_to_log_in(client, world) -> None:
    assert client.get(f"/p/{world.project.slug}/").status_code == 302
    client.force_login(world.outsider)
    assert client.get(f"/p/{world.project.slug}/").status_code == 404


def _queries(client, path: str) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(path).status_code == 200
    return [q["sql"] for q in captured.captured_queries]


TRANSACTION_CONTROL = ("SAVEPOINT", "RELEASE SAVEPOINT", "SELECT set_config")  # the row-level-security scope


def _data_queries(sql: list[str]) -> list[str]:
    return [q for q in sql if not q.startswith(TRANSACTION_CONTROL)]


def test_the_list_costs_one_query_for_its_rows_however_many_there_are(client, world, make_session) -> None:
    client.force_login(world.viewer)
    make_session(world.project, world.member, _raw("first"), seed="q0")
    path = f"/p/{world.project.slug}/?q=first+OR+second"
    few = _queries(client, path)
    for n in range(1, 7):
        make_session(world.project, world.admin, _raw(f"second {n}"), seed=f"q{n}")
    many = _queries(client, path)
    assert len(many) == len(few)
    rows = [q for q in many if '"sessions_app_session"."title"' in q]
    assert len(rows) == 1 and "ts_headline" in rows[0]
    # django session, user, project, membership, my projects (switcher), members (author picker), branches, rows
    assert len(_data_queries(many)) <= 8


def test_the_list_is_one_query_with_fixed_overhead(client, world, sessions, django_assert_max_num_queries) -> None:
    client.force_login(world.viewer)
    with django_assert_max_num_queries(12):  # 8 reads + 4 statements entering and leaving the tenant scope
        client.get(f"/p/{world.project.slug}/?branch=docs")

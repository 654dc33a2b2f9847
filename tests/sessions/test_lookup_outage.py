"""A database that goes away during a session's lookup is an outage, never "No such session".

The test's own connection reaches PostgreSQL through the outage proxy of the e2e tests, which drops
it the moment the session's row is asked for (Django's ``execute_wrapper`` says when), then accepts
connections again: what the application sees when the database restarts under a request.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.conf import settings
from django.db import connection

from projects.scoping import project_scope
from sessions_app.selectors import session_get, session_page_get
from tests.e2e.tcp_proxy import OutageProxy, database_target

pytestmark = pytest.mark.django_db(transaction=True)  # the connection is dropped: no test transaction survives it


@pytest.fixture
def proxy() -> Iterator[OutageProxy]:
    """The test's connection to PostgreSQL, through an outage proxy."""
    configured = settings.DATABASES["default"]
    outage_proxy = OutageProxy(database_target(configured["HOST"], configured["PORT"]))
    direct = {key: connection.settings_dict[key] for key in ("HOST", "PORT")}
    connection.close()
    connection.settings_dict.update(HOST="127.0.0.1", PORT=outage_proxy.port)
    yield outage_proxy
    outage_proxy.restore()
    connection.close()
    connection.settings_dict.update(direct)


@contextmanager
def outage_at_the_session_lookup(proxy: OutageProxy) -> Iterator[None]:
    """The database restarts as the session's row is asked for: that connection is dropped, the next
    one is accepted again."""

    def cut(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        if 'FROM "sessions_app_session"' not in sql or '"sessions_app_session"."id" = ' not in sql:
            return execute(sql, params, many, context)
        proxy.outage()
        try:
            return execute(sql, params, many, context)
        finally:
            proxy.restore()

    with connection.execute_wrapper(cut):
        yield


@pytest.fixture
def session_id(world, ingest) -> str:
    return str(ingest(world.project, world.member, "Add capture").pk)


def test_an_outage_at_the_session_lookup_is_the_apis_503_not_a_404(world, api_as, session_id, proxy) -> None:
    client = api_as(world.viewer)
    with outage_at_the_session_lookup(proxy):
        response = client.get(f"/api/v1/projects/{world.project.slug}/sessions/{session_id}")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "database_unavailable"
    assert response["Retry-After"]
    assert client.get(f"/api/v1/projects/{world.project.slug}/sessions/{session_id}").status_code == 200


def test_an_outage_at_the_session_lookup_is_an_error_on_the_page_not_no_such_session(
    world, client, session_id, proxy
) -> None:
    client.force_login(world.viewer)
    with outage_at_the_session_lookup(proxy):
        response = client.get(f"/p/{world.project.slug}/s/{session_id}")
    assert response.status_code == 503
    assert b"No such session" not in response.content
    assert client.get(f"/p/{world.project.slug}/s/{session_id}").status_code == 200


def test_a_malformed_id_is_no_such_session_without_a_query(world) -> None:
    refuse = connection.execute_wrapper(lambda *_: pytest.fail("a malformed id reached the database"))
    with project_scope(world.project), refuse:
        assert session_get(project=world.project, session_id="not-a-uuid") is None
        assert session_page_get(project=world.project, session_id="1' OR '1'='1") is None

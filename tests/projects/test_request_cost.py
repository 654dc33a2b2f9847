"""The fixed cost of an API request — SQL statements and cache round trips — counted, so it cannot creep back.

A list request with a token costs five statements: the caller's membership with its project, user and
token (one join), then BEGIN, the transaction-local tenant settings, the query and COMMIT (which drops
the settings: no RESET). Its rate limit costs one Redis round trip.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from projects.models import ApiToken
from tests import caching

pytestmark = pytest.mark.django_db(transaction=True)  # the request's own transaction, as in production


def test_a_list_request_costs_five_statements_and_one_redis_round_trip(world, api_as, redis_commands) -> None:
    client = api_as(world.viewer)
    url = f"/api/v1/projects/{world.project.slug}/sessions"
    assert client.get(url).status_code == 200  # the first use of a token records last_used_at
    redis_commands.clear()
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    statements = [q["sql"] for q in queries.captured_queries]
    assert len(statements) == 5, statements
    assert statements[1] == "BEGIN" and statements[-1] == "COMMIT"
    assert not any("RESET" in sql for sql in statements)
    assert redis_commands == ["EVAL"]


def test_after_a_request_the_pooled_connection_holds_no_tenant(world, api_as) -> None:
    client = api_as(world.viewer)
    assert client.get(f"/api/v1/projects/{world.project.slug}/sessions").status_code == 200
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('sessionledger.project', true), current_user, session_user")
        tenant, user, session_user = cursor.fetchone()
    assert tenant in (None, "") and user == session_user


def test_the_project_and_caller_lookup_keeps_every_refusal(world, api_as) -> None:
    """Bad token → 401 whatever the project; outsider or token restricted elsewhere → 404; revoked → 401."""
    slug, other = world.project.slug, world.other_project.slug
    assert api_as(None).get(f"/api/v1/projects/{slug}/sessions").status_code == 401
    bogus = api_as(None)
    bogus.credentials(HTTP_AUTHORIZATION="Bearer slp_not-a-token")
    assert bogus.get(f"/api/v1/projects/{slug}/sessions").status_code == 401
    assert bogus.get("/api/v1/projects/no-such-project/sessions").status_code == 401
    assert api_as(world.outsider).get(f"/api/v1/projects/{slug}/sessions").status_code == 404
    assert api_as(world.viewer).get("/api/v1/projects/no-such-project/sessions").status_code == 404
    restricted = api_as(world.admin, project=world.other_project)
    assert restricted.get(f"/api/v1/projects/{slug}/sessions").status_code == 404
    assert api_as(world.other_admin).get(f"/api/v1/projects/{other}/sessions").status_code == 200
    revoked = api_as(world.viewer)
    ApiToken.objects.filter(user=world.viewer).update(revoked_at="2020-01-01T00:00:00Z")
    assert revoked.get(f"/api/v1/projects/{slug}/sessions").status_code == 401


def test_the_rate_limit_still_counts_in_one_round_trip(world, api_as, settings) -> None:
    from rest_framework.throttling import SimpleRateThrottle

    original = SimpleRateThrottle.THROTTLE_RATES
    SimpleRateThrottle.THROTTLE_RATES = {**original, "query": "3/min"}
    try:
        client = api_as(world.viewer)
        codes = [client.get(f"/api/v1/projects/{world.project.slug}/sessions") for _ in range(4)]
    finally:
        SimpleRateThrottle.THROTTLE_RATES = original
        caching.clear()
    assert [r.status_code for r in codes] == [200, 200, 200, 429]
    assert 0 < int(codes[-1]["Retry-After"]) <= 60

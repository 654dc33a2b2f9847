"""Rate limits (429 + Retry-After, per token) and page-size caps."""

from __future__ import annotations

import pytest

from projects.scoping import project_scope
from sessions_app.models import Session
from tests import caching
from tests.client.transcript_builder import TranscriptBuilder
from tests.uploads import commit_hash, metadata_for, upload


@pytest.fixture
def tight_limits(settings):
    # Imported before the override: imported first under it, DRF would bind the tight rates as its
    # defaults for the rest of the run (THROTTLE_RATES is read from the settings at import).
    from rest_framework.throttling import SimpleRateThrottle

    caching.clear()
    rates = {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "ingest": "2/min", "query": "3/min", "write": "3/min"}
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}
    original = SimpleRateThrottle.THROTTLE_RATES
    SimpleRateThrottle.THROTTLE_RATES = rates
    yield
    SimpleRateThrottle.THROTTLE_RATES = original
    caching.clear()


def test_ingest_beyond_the_rate_is_a_429_with_retry_after(world, api_as, tight_limits) -> None:
    client = api_as(world.member)
    raw = TranscriptBuilder().prompt("x").build()
    statuses = [
        upload(client, world.project.slug, raw, metadata_for(raw, commit_hash=commit_hash(str(n)))) for n in range(3)
    ]
    assert [r.status_code for r in statuses] == [202, 202, 429]
    assert int(statuses[-1]["Retry-After"]) > 0
    assert statuses[-1].json()["error"]["code"] == "throttled"
    other_token = api_as(world.member)  # limits are per token
    assert (
        upload(other_token, world.project.slug, raw, metadata_for(raw, commit_hash=commit_hash("9"))).status_code == 202
    )


def test_queries_beyond_the_rate_are_a_429(world, api_as, tight_limits) -> None:
    client = api_as(world.viewer)
    codes = [client.get(f"/api/v1/projects/{world.project.slug}/sessions").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]


@pytest.fixture
def shared_session(world, ingest):
    return ingest(world.project, world.member, "Explain the retry policy", seed="limits")


def _posts(world, session) -> dict[str, tuple[str, object]]:
    base = f"/api/v1/projects/{world.project.slug}"
    sha = session.commit_hash
    return {
        "why": (f"{base}/commits/{sha}/why", {"path": "a.py", "line": 1}),
        "attribution_match": (f"{base}/commits/{sha}/attribution/match", {"files": []}),
        "attribution_record": (f"{base}/sessions/{session.pk}/attribution", {"version": "0.1.0"}),
        "share_link": (f"{base}/sessions/{session.pk}/shares", {"days": 1}),
        "relink": (f"{base}/commits/relink", {"pairs": []}),
    }


@pytest.mark.parametrize("endpoint", ["why", "attribution_match", "attribution_record", "share_link", "relink"])
def test_a_flood_of_posts_is_a_429_with_retry_after(world, api_as, shared_session, tight_limits, endpoint) -> None:
    url, body = _posts(world, shared_session)[endpoint]
    client = api_as(world.member)
    codes = [client.post(url, body, format="json") for _ in range(4)]
    assert [r.status_code == 429 for r in codes] == [False, False, False, True], [r.status_code for r in codes]
    assert codes[-1].json()["error"]["code"] == "throttled" and int(codes[-1]["Retry-After"]) > 0


def test_posts_do_not_spend_the_query_budget(world, api_as, shared_session, tight_limits) -> None:
    client = api_as(world.member)
    url, body = _posts(world, shared_session)["why"]
    assert all(client.post(url, body, format="json").status_code != 429 for _ in range(3))
    assert client.get(f"/api/v1/projects/{world.project.slug}/sessions").status_code == 200


def test_list_page_size_is_capped_at_200(world, api_as) -> None:
    with project_scope(world.project):
        Session.objects.bulk_create(
            [
                Session(
                    project=world.project, commit_hash=commit_hash(f"bulk{n}"), raw_storage_key="k", author=world.member
                )
                for n in range(205)
            ]
        )
    page = api_as(world.viewer).get(f"/api/v1/projects/{world.project.slug}/sessions?limit=100000").json()
    assert len(page["results"]) == 200 and page["next"]

"""Backpressure at ingest: past SESSIONLEDGER_MAX_QUEUE_DEPTH waiting tasks, uploads get 503 + Retry-After."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import redis
from django.conf import settings as django_settings
from django_scopes import scopes_disabled

from sessions_app import fairness
from sessions_app.models import Session
from tests.conftest import conversation
from tests.uploads import commit_hash, metadata_for, upload


@pytest.fixture
def backlog(settings) -> Iterator[redis.Redis]:
    """A broker queue of its own (nothing else writes to it), with backpressure at 3 waiting tasks."""
    settings.CELERY_TASK_DEFAULT_QUEUE = f"backpressure-{uuid.uuid4().hex[:8]}"
    settings.SESSIONLEDGER_MAX_QUEUE_DEPTH = 3
    settings.SESSIONLEDGER_BACKPRESSURE_RETRY_AFTER = 12
    client = redis.Redis.from_url(django_settings.REDIS_URL)
    client.delete(fairness.WAITING)  # no project's parked sessions left by another test
    yield client
    client.delete(settings.CELERY_TASK_DEFAULT_QUEUE)


def _fill(client: redis.Redis, tasks: int) -> None:
    client.delete(django_settings.CELERY_TASK_DEFAULT_QUEUE)
    if tasks:
        client.rpush(django_settings.CELERY_TASK_DEFAULT_QUEUE, *[b"{}"] * tasks)


def _upload(api, world, seed: str):
    raw = conversation(seed)
    return upload(api, world.project.slug, raw, metadata_for(raw, commit_hash=commit_hash(seed)))


def test_behind_processing_an_upload_is_refused_with_retry_after_and_nothing_stored(world, api_as, backlog) -> None:
    api = api_as(world.member)
    _fill(backlog, 4)
    refused = _upload(api, world, "while behind")
    assert refused.status_code == 503
    assert refused["Retry-After"] == "12"
    assert refused.json()["error"]["code"] == "overloaded"
    with scopes_disabled():
        assert not Session.objects.filter(project=world.project).exists()
    # reads go on while uploads wait
    assert api.get(f"/api/v1/projects/{world.project.slug}/sessions").status_code == 200
    _fill(backlog, 3)  # at the limit, not past it
    assert _upload(api, world, "while behind").status_code == 202


def test_the_off_switch(world, api_as, backlog, settings) -> None:
    settings.SESSIONLEDGER_MAX_QUEUE_DEPTH = 0
    _fill(backlog, 50)
    assert _upload(api_as(world.member), world, "off").status_code == 202


def test_an_unreachable_broker_does_not_refuse_uploads(world, api_as, settings) -> None:
    settings.SESSIONLEDGER_MAX_QUEUE_DEPTH = 1
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    assert _upload(api_as(world.member), world, "no broker").status_code == 202


def test_sessions_parked_behind_a_busy_project_count_toward_the_bound(world, api_as, backlog, settings) -> None:
    settings.SESSIONLEDGER_PROJECT_CONCURRENCY = 1
    busy = str(uuid.uuid4())
    for _ in range(4):  # one runs, three are parked: the Celery queue itself is empty
        fairness.admit(busy, str(uuid.uuid4()))
    _fill(backlog, 0)
    assert _upload(api_as(world.member), world, "parked").status_code == 202  # 3 waiting: at the limit
    fairness.admit(busy, str(uuid.uuid4()))
    refused = _upload(api_as(world.member), world, "parked more")
    assert refused.status_code == 503 and refused.json()["error"]["code"] == "overloaded"
    fairness.redis_client().delete(*fairness._keys(busy)[:2])
    fairness.redis_client().srem(fairness.WAITING, busy)


def test_one_projects_flood_is_refused_while_another_project_still_uploads(world, api_as, backlog, settings) -> None:
    settings.SESSIONLEDGER_MAX_QUEUE_DEPTH = 100
    settings.SESSIONLEDGER_MAX_PROJECT_QUEUE_DEPTH = 2
    flooding = api_as(world.member)
    accepted = [_upload(flooding, world, f"flood {n}").status_code for n in range(4)]
    assert accepted == [202, 202, 202, 503]  # nothing processed them: the third was the last one allowed
    raw = conversation("other project")
    theirs = upload(
        api_as(world.other_admin), world.other_project.slug, raw, metadata_for(raw, commit_hash=commit_hash("o"))
    )
    assert theirs.status_code == 202

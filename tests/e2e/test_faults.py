"""Faults with real services: the broker down at ingest, a worker killed mid-task, racing duplicates."""

from __future__ import annotations

import gzip
import json
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import requests
from django_scopes import scopes_disabled

from config.celery import app
from projects import services
from sessions_app import blobs
from sessions_app.models import Session
from tests.client.transcript_builder import TranscriptBuilder
from tests.e2e.conftest import wait_for_status
from tests.uploads import commit_hash, metadata_for, upload

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
RAW = (
    TranscriptBuilder()
    .prompt("survive faults")
    .tool_call("Bash", {"command": "make"}, result="ok")
    .assistant_text("done")
    .turn_end()
    .build()
)


@contextmanager
def broker_down() -> Iterator[None]:
    """Point Celery at a port where nothing listens (as if Redis were down), then restore it."""
    original = app.conf.broker_url
    _use_broker("redis://127.0.0.1:9/0")
    try:
        yield
    finally:
        _use_broker(original)


def _use_broker(url: str) -> None:
    # Celery caches its connection and producer pools; forget them so the next publish reconnects.
    app.conf.broker_url, app._pool, app.amqp._producer_pool = url, None, None


def test_redis_down_at_ingest_keeps_the_row_and_a_worker_connecting_queues_it_without_the_sweep(
    world, api_as, start_worker
) -> None:
    with broker_down():
        accepted = upload(api_as(world.member), world.project.slug, RAW)
    assert accepted.status_code == 202
    session_id = accepted.json()["id"]
    with scopes_disabled():
        assert Session.objects.get(pk=session_id).status == "processing"  # nothing was queued
    start_worker()  # no beat, so no sweep: the worker's republish on connecting queues it
    assert wait_for_status(session_id, seconds=30).status == "complete"


def test_a_worker_killed_mid_task_has_its_task_redelivered_with_an_identical_result(
    world, api_as, start_worker, ingest
) -> None:
    reference = ingest(world.project, world.member, raw=RAW, seed="reference")  # processed in-process
    app.control.purge()  # so the only message the slow worker can take is the one under test
    slow = start_worker(SESSIONLEDGER_FAULT_PROCESS_DELAY="30", SESSIONLEDGER_BROKER_VISIBILITY_TIMEOUT="2")
    session_id = upload(api_as(world.member), world.project.slug, RAW).json()["id"]
    time.sleep(2)  # the slow worker has taken the task and sits in it, unacknowledged
    slow.send_signal(signal.SIGKILL)
    slow.wait(timeout=10)
    start_worker(SESSIONLEDGER_BROKER_VISIBILITY_TIMEOUT="2")
    session = wait_for_status(session_id, seconds=90)
    assert session.status == "complete"
    mine = blobs.load_json_gz(session.content_storage_key)
    theirs = blobs.load_json_gz(reference.content_storage_key)
    assert mine["messages"] == theirs["messages"] and mine["turns"] == theirs["turns"]
    with scopes_disabled():
        assert Session.objects.filter(commit_hash=session.commit_hash).count() == 1


def test_duplicate_uploads_in_parallel_make_one_session(world, api_as, live_server) -> None:
    _, secret = services.token_create(user=world.member, name="race")
    url = f"{live_server.url}/api/v1/projects/{world.project.slug}/sessions"
    metadata = json.dumps(metadata_for(RAW, commit_hash=commit_hash("race")))
    statuses: list[int] = []

    def send() -> None:
        response = requests.post(
            url,
            headers={"Authorization": f"Bearer {secret}", "Idempotency-Key": "race-1"},
            data={"metadata": metadata},
            files={"transcript": ("t.jsonl.gz", gzip.compress(RAW))},
            timeout=30,
        )
        statuses.append(response.status_code)

    threads = [threading.Thread(target=send) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses).count(202) == 1 and set(statuses) <= {200, 202}
    with scopes_disabled():
        assert Session.objects.count() == 1


def _wait_for_attempts(session_id: str, attempts: int, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with scopes_disabled():
            if Session.objects.get(pk=session_id).processing_attempts >= attempts:
                return
        time.sleep(0.2)
    raise AssertionError(f"session {session_id} never reached {attempts} processing attempt(s)")


def test_a_session_that_kills_its_worker_every_time_is_failed_after_its_attempts(world, api_as, start_worker) -> None:
    app.control.purge()
    once = {"SESSIONLEDGER_BROKER_VISIBILITY_TIMEOUT": "2", "SESSIONLEDGER_PROCESS_MAX_ATTEMPTS": "1"}
    slow = start_worker(SESSIONLEDGER_FAULT_PROCESS_DELAY="30", **once)
    session_id = upload(api_as(world.member), world.project.slug, RAW).json()["id"]
    _wait_for_attempts(session_id, 1)  # counted and committed before the work, so the kill cannot undo it
    slow.send_signal(signal.SIGKILL)
    slow.wait(timeout=10)
    start_worker(**once)
    session = wait_for_status(session_id, seconds=90)
    assert session.status == "failed" and "after 1 processing attempt(s)" in session.error


def test_a_flood_from_one_project_does_not_hold_back_another_projects_session(world, api_as, start_worker) -> None:
    app.control.purge()
    flood = [
        upload(api_as(world.member), world.project.slug, RAW, metadata_for(RAW, commit_hash=commit_hash(f"f{n}")))
        for n in range(6)
    ]
    theirs = upload(api_as(world.other_admin), world.other_project.slug, RAW).json()["id"]
    start_worker(
        "--pool",
        "prefork",
        "--concurrency",
        "2",
        SESSIONLEDGER_FAULT_PROCESS_DELAY="1",
        SESSIONLEDGER_PROJECT_CONCURRENCY="1",
    )
    other = wait_for_status(theirs, seconds=90)
    done = [wait_for_status(accepted.json()["id"], seconds=120) for accepted in flood]
    assert other.status == "complete" and {s.status for s in done} == {"complete"}
    # Queued behind all six, the other project's session still finished before the flood's last four.
    assert sum(s.processed_at > other.processed_at for s in done) >= 4

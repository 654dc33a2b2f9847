"""Backpressure bounds what actually waits (real uploads over HTTP, a real Celery worker): during one
project's flood, queued + parked sessions stay within the bound plus the uploads in flight, and another
project's session is processed while the flood is still waiting."""

from __future__ import annotations

import gzip
import json
import threading
import time

import pytest
import requests
from django.conf import settings as django_settings
from django.db import connection
from django_scopes import scopes_disabled

from config.celery import app
from projects import services
from sessions_app import backpressure, fairness
from sessions_app.models import Session, Status
from tests.e2e.conftest import wait_for_status
from tests.e2e.test_faults import RAW
from tests.uploads import commit_hash, metadata_for

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
UPLOADERS, UPLOADS_EACH, OVERALL, PER_PROJECT = 4, 8, 8, 4


def _send(url: str, secret: str, seed: str) -> requests.Response:
    return requests.post(
        url,
        headers={"Authorization": f"Bearer {secret}"},
        data={"metadata": json.dumps(metadata_for(RAW, commit_hash=commit_hash(seed)))},
        files={"transcript": ("t.jsonl.gz", gzip.compress(RAW))},
        timeout=30,
    )


def test_a_flood_is_refused_at_the_bound_and_another_projects_upload_goes_through(
    world, start_worker, live_server, settings
) -> None:
    settings.SESSIONLEDGER_MAX_QUEUE_DEPTH, settings.SESSIONLEDGER_MAX_PROJECT_QUEUE_DEPTH = OVERALL, PER_PROJECT
    settings.SESSIONLEDGER_PROJECT_CONCURRENCY = 1
    app.control.purge()
    fairness.redis_client().delete(fairness.WAITING)
    start_worker(
        "--pool",
        "prefork",
        "--concurrency",
        "2",
        SESSIONLEDGER_FAULT_PROCESS_DELAY="0.5",
        SESSIONLEDGER_PROJECT_CONCURRENCY="1",
    )
    _, secret = services.token_create(user=world.member, name="flood")
    _, theirs_secret = services.token_create(user=world.other_admin, name="other")
    flood_url = f"{live_server.url}/api/v1/projects/{world.project.slug}/sessions"
    statuses: list[int] = []
    waiting: list[int] = []
    project_waiting: list[int] = []
    flooding = threading.Event()
    flooding.set()

    def uploader(n: int) -> None:
        for m in range(UPLOADS_EACH):
            statuses.append(_send(flood_url, secret, f"flood {n} {m}").status_code)

    def sampler() -> None:
        try:
            while flooding.is_set():
                waiting.append(fairness.waiting_total(django_settings.CELERY_TASK_DEFAULT_QUEUE) or 0)
                with scopes_disabled():
                    project_waiting.append(backpressure.project_backlog(world.project))
        finally:
            connection.close()  # this thread's own connection, or the test database cannot be dropped

    threads = [threading.Thread(target=uploader, args=(n,)) for n in range(UPLOADERS)]
    watcher = threading.Thread(target=sampler)
    watcher.start()
    for thread in threads:
        thread.start()
    while statuses.count(503) == 0 and any(thread.is_alive() for thread in threads):
        time.sleep(0.1)  # the flood has reached its bound
    other_url = f"{live_server.url}/api/v1/projects/{world.other_project.slug}/sessions"
    theirs = _send(other_url, theirs_secret, "the other project")
    assert theirs.status_code == 202
    other = wait_for_status(theirs.json()["id"], seconds=30)
    with scopes_disabled():
        still_waiting = Session.objects.filter(project=world.project, status=Status.PROCESSING).count()
    for thread in threads:
        thread.join()
    flooding.clear()
    watcher.join()

    assert other.status == "complete"
    assert still_waiting > 0  # processed while the flood still waited, not after it
    assert 503 in statuses and 202 in statuses and set(statuses) <= {202, 503}
    assert max(waiting) <= OVERALL + UPLOADERS
    assert max(project_waiting) <= PER_PROJECT + UPLOADERS
    accepted = statuses.count(202)
    with scopes_disabled():
        assert Session.objects.filter(project=world.project).count() == accepted  # a refusal stored nothing

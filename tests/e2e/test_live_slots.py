"""A project's fairness slot is held by a live worker (real Celery workers and beat, real Redis):
when the worker holding it is killed, the project's sessions go on with another worker within
seconds, without waiting for the broker's visibility timeout or the sweep."""

from __future__ import annotations

import signal
import time

import pytest

from config.celery import app
from sessions_app import fairness
from tests.e2e.conftest import wait_for_status
from tests.e2e.test_faults import RAW, _wait_for_attempts
from tests.uploads import commit_hash, metadata_for, upload

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
# Every worker of this test: one slot per project, a short lease, the reaper every second.
LIVE_SLOTS = {
    "SESSIONLEDGER_PROJECT_CONCURRENCY": "1",
    "SESSIONLEDGER_SLOT_LEASE_SECONDS": "3",
    "SESSIONLEDGER_REAP_EVERY": "1",
}


def _wait_until_parked(project_id: object, sessions: list[str], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if sorted(fairness.parked(project_id)) == sorted(sessions):
            return
        time.sleep(0.2)
    raise AssertionError(f"{sessions} were not parked: {fairness.parked(project_id)}")


def test_a_killed_worker_frees_its_projects_slot_and_its_next_sessions_are_processed(
    world, api_as, start_worker, settings, tmp_path
) -> None:
    settings.SESSIONLEDGER_PROJECT_CONCURRENCY = 1
    app.control.purge()
    api = api_as(world.member)
    doomed = start_worker(SESSIONLEDGER_FAULT_PROCESS_DELAY="600", **LIVE_SLOTS)
    first = upload(api, world.project.slug, RAW).json()["id"]
    _wait_for_attempts(first, 1)  # the doomed worker holds the project's slot and sits in the task
    # A healthy worker with the beat: the next sessions find the slot busy and are parked.
    start_worker("-B", "--schedule", str(tmp_path / "beat-schedule"), **LIVE_SLOTS)
    following = [
        upload(api, world.project.slug, RAW, metadata_for(RAW, commit_hash=commit_hash(f"next {n}"))).json()["id"]
        for n in range(2)
    ]
    _wait_until_parked(world.project.pk, following)
    doomed.send_signal(signal.SIGKILL)  # its message stays unacknowledged; its heartbeat stops
    doomed.wait(timeout=10)
    done = [wait_for_status(session_id, seconds=30) for session_id in [*following, first]]
    assert [session.status for session in done] == ["complete"] * 3
    assert fairness.parked(world.project.pk) == []

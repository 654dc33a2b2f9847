"""Fairness between projects (sessions_app.fairness) against the real Redis: a project's sessions
beyond its slots are parked and handed on in order; another project is never kept waiting.
The end-to-end version with a real worker is in tests/e2e/test_faults.py."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from config.celery import app
from sessions_app import fairness
from sessions_app.fairness import Admission
from sessions_app.tasks import enqueue_processing, reap_slots


@pytest.fixture
def one_slot(settings) -> None:
    settings.SESSIONLEDGER_PROJECT_CONCURRENCY = 1


@pytest.fixture(autouse=True)
def _forget_parked() -> Iterator[None]:
    """The made-up projects' parked sets are not left for backpressure's count in later tests."""
    yield
    fairness.redis_client().delete(fairness.WAITING)


def _ids(n: int) -> list[str]:
    return [str(uuid.uuid4()) for _ in range(n)]


def test_a_projects_sessions_beyond_its_slots_are_parked_in_order(one_slot) -> None:
    flooding, first, *waiting = [str(uuid.uuid4()), *_ids(4)]
    assert fairness.admit(flooding, first) is Admission.ADMITTED
    assert [fairness.admit(flooding, s) for s in waiting] == [Admission.PARKED] * 3
    assert fairness.parked(flooding) == waiting
    assert fairness.release(flooding, first) == [waiting[0]]  # the oldest parked one is queued next
    assert fairness.admit(flooding, waiting[0]) is Admission.ADMITTED
    assert fairness.parked(flooding) == waiting[1:]


def test_another_project_is_admitted_while_one_project_is_full(one_slot) -> None:
    flooding, other = str(uuid.uuid4()), str(uuid.uuid4())
    running, *flood = _ids(50)
    fairness.admit(flooding, running)
    assert {fairness.admit(flooding, s) for s in flood} == {Admission.PARKED}
    assert fairness.admit(other, str(uuid.uuid4())) is Admission.ADMITTED


def test_a_session_redelivered_after_its_worker_died_takes_its_slot_back(one_slot) -> None:
    project, session = str(uuid.uuid4()), str(uuid.uuid4())
    assert fairness.admit(project, session) is Admission.ADMITTED  # the worker holding it is killed
    assert fairness.admit(project, session) is Admission.ADMITTED


def test_a_parked_session_is_queued_when_the_slot_frees(world, ingest, one_slot) -> None:
    running = ingest(world.project, world.member, "running")
    waiting = ingest(world.project, world.member, "waiting")
    app.control.purge()
    with fairness.project_slot(world.project.pk, running.pk, enqueue_processing) as admitted:
        assert admitted
        with fairness.project_slot(world.project.pk, waiting.pk, enqueue_processing) as second:
            assert not second
    with app.connection_for_write() as broker:
        queued = broker.default_channel.client.lrange(app.conf.task_default_queue, 0, -1)
    assert any(str(waiting.pk).encode() in message for message in queued)
    app.control.purge()


def test_no_limit_when_fairness_is_off(settings) -> None:
    settings.SESSIONLEDGER_PROJECT_CONCURRENCY = 0
    project = str(uuid.uuid4())
    assert {fairness.admit(project, s) for s in _ids(10)} == {Admission.ADMITTED}


def _expire_lease(project: str, session: str) -> None:
    """As if the holder's worker had died: its lease is in the past and no heartbeat renews it."""
    fairness.redis_client().zadd(fairness._keys(project)[0], {session: 0})


def test_a_dead_workers_session_is_queued_again_once_its_lease_runs_out(one_slot) -> None:
    project, (dead, *waiting) = str(uuid.uuid4()), _ids(3)
    fairness.admit(project, dead)
    assert [fairness.admit(project, s) for s in waiting] == [Admission.PARKED] * 2
    queued: list[str] = []
    assert fairness.reap(queued.append) == 0  # a live holder keeps its slot
    _expire_lease(project, dead)
    assert fairness.reap(queued.append) == 1
    assert queued == [dead]  # its own session first, at the head of the parked ones
    assert fairness.parked(project) == waiting
    assert fairness.admit(project, dead) is Admission.ADMITTED


def test_an_admission_after_a_lease_ran_out_queues_parked_sessions_for_the_free_slots(settings) -> None:
    settings.SESSIONLEDGER_PROJECT_CONCURRENCY = 2
    project, (first, second, *waiting) = str(uuid.uuid4()), _ids(5)
    fairness.admit(project, first)
    fairness.admit(project, second)
    assert {fairness.admit(project, s) for s in waiting[:2]} == {Admission.PARKED}
    _expire_lease(project, first)
    _expire_lease(project, second)
    queued: list[str] = []
    assert fairness.admit(project, waiting[2], queued.append) is Admission.ADMITTED
    assert len(queued) == 1 and queued[0] in {first, second}  # the other free slot goes to a dead holder's session


def test_a_release_hands_every_free_slot_on(settings) -> None:
    settings.SESSIONLEDGER_PROJECT_CONCURRENCY = 2
    project, (first, second, *waiting) = str(uuid.uuid4()), _ids(5)
    fairness.admit(project, first)
    fairness.admit(project, second)
    for session in waiting:
        fairness.admit(project, session)
    _expire_lease(project, second)
    assert fairness.release(project, first) == [second, waiting[0]]  # the dead holder's first


def test_the_heartbeat_keeps_a_running_sessions_slot_past_its_lease(one_slot, settings) -> None:
    settings.SESSIONLEDGER_SLOT_LEASE_SECONDS = 0.3
    project, (running, other) = str(uuid.uuid4()), _ids(2)
    holders = fairness._keys(project)[0]
    queued: list[str] = []
    with fairness.project_slot(project, running, queued.append) as admitted:
        assert admitted
        first = fairness.redis_client().zscore(holders, running)
        deadline = time.monotonic() + 10
        while fairness.redis_client().zscore(holders, running) == first and time.monotonic() < deadline:
            time.sleep(0.05)
        assert fairness.redis_client().zscore(holders, running) > first  # renewed while running
        while (fairness.redis_client().zscore(holders, running) or 0) < first + 0.3 and time.monotonic() < deadline:
            time.sleep(0.05)  # past the first lease's end: only the heartbeat can have kept it
        assert fairness.admit(project, other) is Admission.PARKED
    assert queued == [other]


def test_the_reaper_task_queues_what_a_dead_worker_left(world, ingest, one_slot) -> None:
    dead = ingest(world.project, world.member, "dead")
    waiting = ingest(world.project, world.member, "waiting")
    fairness.admit(world.project.pk, dead.pk)
    fairness.admit(world.project.pk, waiting.pk)
    _expire_lease(str(world.project.pk), str(dead.pk))
    app.control.purge()
    assert reap_slots() == 1
    with app.connection_for_write() as broker:
        queued = broker.default_channel.client.lrange(app.conf.task_default_queue, 0, -1)
    assert [str(dead.pk).encode() in message for message in queued] == [True]
    app.control.purge()

"""Fairness between projects (sessions_app.fairness) against the real Redis: a project's sessions
beyond its slots are parked and handed on in order; another project is never kept waiting.
The end-to-end version with a real worker is in tests/e2e/test_faults.py."""

from __future__ import annotations

import uuid

import pytest

from config.celery import app
from sessions_app import fairness
from sessions_app.fairness import Admission
from sessions_app.tasks import enqueue_processing


@pytest.fixture
def one_slot(settings) -> None:
    settings.SESSIONLEDGER_PROJECT_CONCURRENCY = 1


def _ids(n: int) -> list[str]:
    return [str(uuid.uuid4()) for _ in range(n)]


def test_a_projects_sessions_beyond_its_slots_are_parked_in_order(one_slot) -> None:
    flooding, first, *waiting = [str(uuid.uuid4()), *_ids(4)]
    assert fairness.admit(flooding, first) is Admission.ADMITTED
    assert [fairness.admit(flooding, s) for s in waiting] == [Admission.PARKED] * 3
    assert fairness.parked(flooding) == waiting
    assert fairness.release(flooding, first) == waiting[0]  # the oldest parked one is queued next
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

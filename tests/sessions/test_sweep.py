"""What is left ``processing`` with no task is queued again, once; what is queued, parked or running is
left alone (docs/scaling.md "Lost tasks"); and a session that can start now is taken before a busy
project's backlog (docs/scaling.md "Priorities, not one FIFO")."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.conf import settings as django_settings
from django_scopes import scopes_disabled

from config.celery import app
from sessions_app import fairness
from sessions_app.models import Session
from sessions_app.tasks import enqueue_new, enqueue_processing, sweep_processing


@pytest.fixture(autouse=True)
def empty_queue(world) -> Iterator[None]:
    app.control.purge()
    yield
    app.control.purge()
    for project in (world.project, world.other_project):
        fairness.redis_client().delete(*fairness._keys(project.pk)[:2])


def _processing(session: Session) -> Session:
    with scopes_disabled():
        Session.objects.filter(pk=session.pk).update(status="processing")
        return Session.objects.get(pk=session.pk)


def _queued() -> list[str]:
    """The session of every queued task, in the order a worker takes them."""
    taken = []
    with app.connection_for_read() as connection:
        queue = connection.SimpleQueue(django_settings.CELERY_TASK_DEFAULT_QUEUE)
        while True:
            try:
                message = queue.get(block=False)
            except queue.Empty:
                return taken
            taken.append(message.payload[0][0])
            message.ack()


def test_the_sweep_queues_a_lost_session_once_and_leaves_queued_and_parked_ones(world, ingest, settings) -> None:
    settings.SESSIONLEDGER_SWEEP_AFTER_SECONDS = 0
    settings.SESSIONLEDGER_PROJECT_CONCURRENCY = 1
    lost, queued, running, parked = (_processing(ingest(world.project, world.member, name)) for name in "lqrp")
    enqueue_processing(queued.pk)
    assert fairness.admit(world.project.pk, running.pk) is fairness.Admission.ADMITTED
    assert fairness.admit(world.project.pk, parked.pk) is fairness.Admission.PARKED
    assert sweep_processing() == 1
    assert sweep_processing() == 0  # it is queued now: a second sweep does not queue it again
    assert sorted(_queued()) == sorted([str(queued.pk), str(lost.pk)])


def test_a_session_that_can_start_now_is_taken_before_a_busy_projects_backlog(world, ingest, settings) -> None:
    settings.SESSIONLEDGER_PROJECT_CONCURRENCY = 1
    flood = [_processing(ingest(world.project, world.member, f"flood {n}", seed=f"f{n}")) for n in range(3)]
    other = _processing(ingest(world.other_project, world.other_admin, "other"))
    for session in [*flood, other]:
        enqueue_new(session)
    assert _queued()[0] == str(other.pk)

"""Backpressure: uploads are refused (503 + Retry-After) while processing is too far behind.

Ingest is cheap (store the gzip, insert a row, queue a task) and processing is not, so without a bound
a burst of uploads — or too few workers — builds a backlog that grows for as long as the burst lasts,
invisible to the people whose sessions wait in it. What waits is counted, not just the Celery queue: a
busy project's tasks leave the queue within milliseconds for the project's parked set
(sessions_app/fairness.py), so the bound is on queued + parked sessions. Two bounds:

- overall, ``SESSIONLEDGER_MAX_QUEUE_DEPTH``: tasks in the Celery queue plus sessions parked in every
  project (one Redis script per upload);
- per project, ``SESSIONLEDGER_MAX_PROJECT_QUEUE_DEPTH``: the project's sessions still ``processing``
  (queued, parked, running or left for the sweep; one indexed count), so one project's flood is refused
  long before it fills the overall bound and delays everybody else.

Past either, an upload is answered ``503 overloaded`` with ``Retry-After:
SESSIONLEDGER_BACKPRESSURE_RETRY_AFTER`` seconds: nothing is stored, and the client keeps the segment
in its queue and sends it again after that delay (docs/client.md), with the same Idempotency-Key.
When Redis cannot be reached the overall bound is not applied (fail open): queueing the task fails too,
and the sweep queues it later. A bound of 0 turns its check off (docs/scaling.md says how to choose them).
"""

from __future__ import annotations

import logging

from django.conf import settings

from projects.errors import DomainError
from projects.models import Project
from sessions_app import fairness, tasks

logger = logging.getLogger(__name__)


def project_backlog(project: Project) -> int:
    """The project's sessions not processed yet."""
    return tasks.project_backlog(project.pk)


def refuse_when_behind(project: Project) -> None:
    """Raise a 503 ``overloaded`` when more sessions wait than a bound allows, the project's or the site's."""
    project_limit = settings.SESSIONLEDGER_MAX_PROJECT_QUEUE_DEPTH
    if project_limit > 0 and (waiting := project_backlog(project)) > project_limit:
        logger.warning("upload refused: %d sessions of the project wait (limit %d)", waiting, project_limit)
        raise _overloaded("The server is behind with this project's processing")
    limit = settings.SESSIONLEDGER_MAX_QUEUE_DEPTH
    if limit > 0 and (waiting := fairness.waiting_total(settings.CELERY_TASK_DEFAULT_QUEUE) or 0) > limit:
        logger.warning("upload refused: %d sessions wait for a worker (limit %d)", waiting, limit)
        raise _overloaded("The server is behind with processing")


def _overloaded(reason: str) -> DomainError:
    wait = settings.SESSIONLEDGER_BACKPRESSURE_RETRY_AFTER
    return DomainError(
        "overloaded",
        f"{reason}; nothing was stored. Try again in {wait} seconds.",
        status_code=503,
        retry_after=wait,
    )

"""The one wrapper every Celery task goes through.

Tasks take an id, load the row across tenants (a task is not a request), then run inside that
row's project scope. Late acks + reject-on-worker-lost mean a worker killed mid-task leaves the
message to be redelivered, so task bodies must be idempotent.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from celery import shared_task
from django.core.exceptions import ObjectDoesNotExist
from django.db import models

from projects.scoping import project_scope, unscoped

logger = logging.getLogger(__name__)


class TransientError(Exception):
    """Worth retrying later (storage hiccup, lock timeout)."""


def load_row(model: type[models.Model], related: tuple[str, ...], object_id: object) -> Any:
    """The row of ``object_id`` with its ``related`` rows (one query), across tenants: a task is not a request."""
    with unscoped():
        try:
            return model._default_manager.select_related(*related).get(pk=object_id)
        except ObjectDoesNotExist:
            return None


def project_task(
    *,
    model: type[models.Model],
    name: str,
    time_limit: int = 600,
    max_retries: int = 5,
    gate: Callable[[Any], AbstractContextManager[bool]] | None = None,
    related: tuple[str, ...] = ("project",),
    durable: bool = True,
) -> Callable[[Callable[[Any], Any]], Any]:
    """``gate(obj)``, if given, is entered before the project scope, outside any transaction (so
    what it writes is committed at once), and yields whether the body runs now. ``related`` are
    loaded with the object (in the same query). ``durable=False``: the body's transaction commits without
    waiting for the WAL flush, for a body whose result can be derived again (``projects.rls.lazy_commit``)."""

    def decorate(body: Callable[[Any], Any]) -> Any:
        @shared_task(
            name=name,
            bind=True,
            acks_late=True,
            reject_on_worker_lost=True,
            time_limit=time_limit,
            soft_time_limit=time_limit - 30,
            max_retries=max_retries,
            autoretry_for=(TransientError,),
            retry_backoff=5,
            retry_backoff_max=600,
            retry_jitter=True,
        )
        def task(self: Any, object_id: str) -> Any:
            obj = load_row(model, related, object_id)
            if obj is None:
                logger.warning("%s: %s %s no longer exists; nothing to do", name, model.__name__, object_id)
                return None
            with gate(obj) if gate else nullcontext(True) as admitted:
                if not admitted:
                    return None
                with project_scope(obj.project, durable=durable):
                    return body(obj)

        return task

    return decorate

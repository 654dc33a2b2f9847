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
from django.db import connections, models
from django.db.models.query import get_related_populators

from projects.scoping import project_scope, unscoped

logger = logging.getLogger(__name__)


class TransientError(Exception):
    """Worth retrying later (storage hiccup, lock timeout)."""


class RowLoader:
    """One row by primary key with its ``related`` rows (across tenants), its SQL compiled once per process.

    The ORM compiles a ``select_related`` query on every call, and for a worker's small session that cost
    more than running it (docs/scaling.md, worker). So the first load keeps the compiler — statement,
    column layout, converters — and later loads change only the primary key; rows are built as the ORM's
    ``ModelIterable`` builds them (``from_db``, then the related populators). A statement of another shape
    than expected (one parameter, the key) is simply compiled every time.
    """

    def __init__(self, model: type[models.Model], related: tuple[str, ...]) -> None:
        self.model, self.related = model, related
        self.compiled: tuple[Any, str] | None = None

    def load(self, object_id: object) -> Any:
        pk_field = self.model._meta.pk
        assert pk_field is not None
        connection = connections[self.model.objects.db]  # type: ignore[attr-defined]
        key = pk_field.get_db_prep_value(pk_field.to_python(object_id), connection)
        if self.compiled is None:
            with unscoped():  # by primary key, unordered: the default ordering would only cost compiling
                queryset = self.model.objects.select_related(*self.related).filter(pk=object_id).order_by()[:1]  # type: ignore[attr-defined]
                compiler = queryset.query.get_compiler(using=queryset.db)
                sql, params = compiler.as_sql()
                if list(params) != [key]:
                    return next(iter(queryset), None)
            self.compiled = (compiler, sql)
        compiler, sql = self.compiled
        with connection.cursor() as cursor:
            cursor.execute(sql, [key])
            row = cursor.fetchone()
        if row is None:
            return None
        row = next(iter(compiler.results_iter([[row]])))
        info = compiler.klass_info
        first, last = info["select_fields"][0], info["select_fields"][-1] + 1
        names = [column[0].target.attname for column in compiler.select[first:last]]
        obj = info["model"].from_db(connection.alias, names, row[first:last])
        for populator in get_related_populators(info, compiler.select, connection.alias):  # type: ignore[call-arg]
            populator.populate(row, obj)
        return obj


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
    loaded with the object (in the same query); ``durable=False`` lets the body's transaction
    commit without waiting for the WAL flush, for bodies whose result can be derived again
    (``projects.rls.tenant_transaction``)."""

    loader = RowLoader(model, related)

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
            obj = loader.load(object_id)
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

"""The three ways into a project scope, and the one named way around it.

Requests enter a scope in the base views (``projects.access.ProjectAPIView`` for the API,
``frontend.access.ProjectPageMixin`` for pages), Celery tasks in ``projects.tasking.project_task``,
commands and scripts with ``project_scope``. Code that must see every tenant (sweeps, retention,
admin) says so with ``unscoped()`` so it can be grepped.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django_scopes import scope, scopes_disabled

from projects.models import Project
from projects.rls import tenant_transaction


@contextmanager
def project_scope(project: Project, *, durable: bool = True) -> Iterator[Project]:
    """Both walls at once: django-scopes in Python, row-level security in PostgreSQL (``durable``:
    ``projects.rls.tenant_transaction``)."""
    with scope(project=project), tenant_transaction(project.pk, durable=durable):
        yield project


def unscoped() -> Any:  # django-scopes has no type hints: a context manager
    """Deliberately query across tenants (sweeps, retention, site admin)."""
    return scopes_disabled()

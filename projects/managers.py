"""The manager of every tenant-owned model: django-scopes' scoped manager, as a named class.

``django_scopes.ScopedManager(project="project")`` builds its manager class inside a function;
naming it here once gives the type checker (and a reader) a class it can find, and keeps the
scope dimension in one place: a query on a tenant-owned model without an active project scope
raises ``ScopeError`` (see ``projects.scoping``).
"""

from __future__ import annotations

from django_scopes import ScopedManager


class ProjectScopedManager(ScopedManager(project="project").__class__):  # type: ignore[misc]
    """Filters every queryset to the active project scope; refuses to query without one."""

"""Django admin's project deletion goes through this app's service: deleting a project queues its
blobs (``sessions_app.deletion``). The ``projects`` admin class stays; this replaces its registration
with a subclass that calls the service (deactivating a user is ``governance.admin``'s)."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from projects import admin as projects_admin
from projects.errors import DomainError
from projects.models import Project
from projects.scoping import unscoped
from sessions_app.deletion import project_delete


class ErasingProjectAdmin(projects_admin.ProjectAdmin):
    def has_delete_permission(self, request: HttpRequest, obj: Project | None = None) -> bool:
        held = obj is not None and obj.legal_hold_since is not None  # no delete button under a hold
        return not held and super().has_delete_permission(request, obj)

    def delete_model(self, request: HttpRequest, obj: Project) -> None:
        project_delete(project=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Project]) -> None:
        with unscoped():
            for project in queryset:
                try:
                    project_delete(project=project)
                except DomainError as exc:  # under legal hold: the others go, this one is named
                    self.message_user(request, exc.message, level=messages.ERROR)


admin.site.unregister(Project)
admin.site.register(Project, ErasingProjectAdmin)

"""Django admin paths that must go through this app's services: deactivating a user ends every access
(``offboarding``), deleting a project queues its blobs (``erasure``). The ``projects`` admin classes stay;
these replace their registrations with subclasses that call the services."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from projects import admin as projects_admin
from projects.models import Project, User
from projects.scoping import unscoped
from sessions_app.erasure import project_delete
from sessions_app.offboarding import user_deactivate


@admin.action(description="Deactivate: end every access (tokens, device logins, share links, memberships, invitations)")
def deactivate(modeladmin: admin.ModelAdmin[User], request: HttpRequest, queryset: QuerySet[User]) -> None:
    for user in queryset.filter(is_active=True):
        user_deactivate(user=user)


class OffboardingUserAdmin(projects_admin.UserAdmin):
    actions = [deactivate]

    def save_model(self, request: HttpRequest, obj: User, form: Any, change: bool) -> None:
        was_active = change and User.objects.filter(pk=obj.pk, is_active=True).exists()
        super().save_model(request, obj, form, change)
        if was_active and not obj.is_active:
            user_deactivate(user=obj)


class ErasingProjectAdmin(projects_admin.ProjectAdmin):
    def delete_model(self, request: HttpRequest, obj: Project) -> None:
        project_delete(project=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Project]) -> None:
        with unscoped():
            for project in queryset:
                project_delete(project=project)


admin.site.unregister(User)
admin.site.register(User, OffboardingUserAdmin)
admin.site.unregister(Project)
admin.site.register(Project, ErasingProjectAdmin)

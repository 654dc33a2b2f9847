"""Django admin's user deactivation goes through offboarding (``governance.offboarding``), which ends
every access at once. The ``projects`` admin class stays; this replaces its registration with a
subclass that calls the service."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from governance.offboarding import user_deactivate
from projects import admin as projects_admin
from projects.models import User


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


admin.site.unregister(User)
admin.site.register(User, OffboardingUserAdmin)

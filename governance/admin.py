"""Django admin's user deactivation goes through offboarding (``governance.offboarding``), which ends
every access at once. The ``projects`` admin class stays; this replaces its registration with a
subclass that calls the service."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from governance.groups import mapping_create, mapping_delete
from governance.models import GroupMapping, ScimGroup, ScimToken
from governance.offboarding import user_deactivate
from governance.scim_tokens import scim_token_create, scim_token_revoke
from projects import admin as projects_admin
from projects.audit_trail import record
from projects.models import User


@admin.action(description="Deactivate: end every access (tokens, device logins, share links, memberships, invitations)")
def deactivate(modeladmin: admin.ModelAdmin[User], request: HttpRequest, queryset: QuerySet[User]) -> None:
    for user in queryset.filter(is_active=True):
        user_deactivate(user=user)


class OffboardingUserAdmin(projects_admin.UserAdmin):
    actions = [deactivate]

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        """The SCIM fields beside the others: break-glass is the operator's to set (docs/identity.md)."""
        fieldsets = list(super().get_fieldsets(request, obj))
        if obj is None:  # the add form is the password pair only
            return fieldsets
        return [*fieldsets, ("SCIM", {"fields": ("break_glass", "external_id", "scim_user_name")})]

    def get_list_filter(self, request: HttpRequest) -> Any:
        return (*super().get_list_filter(request), "break_glass")

    def save_model(self, request: HttpRequest, obj: User, form: Any, change: bool) -> None:
        was_active = change and User.objects.filter(pk=obj.pk, is_active=True).exists()
        super().save_model(request, obj, form, change)
        if change and "break_glass" in form.changed_data:
            record(request, kind="user.break_glass_changed", target=obj.email, detail={"break_glass": obj.break_glass})
        if was_active and not obj.is_active:
            user_deactivate(user=obj)


admin.site.unregister(User)
admin.site.register(User, OffboardingUserAdmin)


if TYPE_CHECKING:
    _GroupAdminBase = admin.ModelAdmin[ScimGroup]
    _TokenAdminBase = admin.ModelAdmin[ScimToken]
else:  # Django's ModelAdmin is generic only in its stubs
    _GroupAdminBase = _TokenAdminBase = admin.ModelAdmin


@admin.register(GroupMapping)
class GroupMappingAdmin(projects_admin.UnscopedAdmin):
    """Saving and deleting go through ``governance.groups``, so memberships follow at once."""

    list_display = ("group", "match_on", "project", "role")
    list_filter = ("match_on", "role")
    autocomplete_fields = ("project",)
    fields = ("match_on", "group", "project", "role")

    def get_readonly_fields(self, request: HttpRequest, obj: GroupMapping | None = None) -> Any:
        return self.fields if obj is not None else ()  # delete and add again: a change is two events

    def save_model(self, request: HttpRequest, obj: GroupMapping, form: Any, change: bool) -> None:
        if not change:
            saved = mapping_create(match_on=obj.match_on, group=obj.group, project=obj.project, role=obj.role)
            obj.pk = saved.pk

    def delete_model(self, request: HttpRequest, obj: GroupMapping) -> None:
        mapping_delete(mapping=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[GroupMapping]) -> None:
        for mapping in queryset:
            mapping_delete(mapping=mapping)


@admin.register(ScimGroup)
class ScimGroupAdmin(_GroupAdminBase):
    """Read-only: the identity provider owns its groups."""

    list_display = ("display_name", "external_id", "created_at")
    search_fields = ("display_name", "external_id")
    readonly_fields = ("display_name", "external_id", "members", "created_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(ScimToken)
class ScimTokenAdmin(_TokenAdminBase):
    """Create: the secret is shown once, in the message after saving. Revoke: the action."""

    list_display = ("name", "prefix", "created_at", "last_used_at", "revoked_at")
    fields = ("name",)
    actions = ["revoke"]

    def get_readonly_fields(self, request: HttpRequest, obj: ScimToken | None = None) -> Any:
        return ("name",) if obj is not None else ()

    def save_model(self, request: HttpRequest, obj: ScimToken, form: Any, change: bool) -> None:
        if not change:
            token, secret = scim_token_create(name=obj.name)
            obj.pk = token.pk
            messages.warning(request, f"The SCIM token (shown once, give it to the identity provider): {secret}")

    def has_delete_permission(self, request: HttpRequest, obj: ScimToken | None = None) -> bool:
        return False  # revoked, never deleted: the list shows which tokens were in use

    @admin.action(description="Revoke the selected SCIM tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ScimToken]) -> None:
        for token in queryset:
            scim_token_revoke(token=token)

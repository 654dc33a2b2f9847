from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin
from django_scopes import scopes_disabled

from projects.models import ApiToken, Invitation, Membership, Project, User


class UnscopedAdmin(admin.ModelAdmin):
    """Site staff see every tenant: the admin is a deliberate, named bypass of scoping."""

    def changelist_view(self, request, extra_context=None):
        with scopes_disabled():
            return super().changelist_view(request, extra_context)

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        with scopes_disabled():
            return super().changeform_view(request, object_id, form_url, extra_context)

    def delete_view(self, request, object_id, extra_context=None):
        with scopes_disabled():
            return super().delete_view(request, object_id, extra_context)


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    ordering = ["email"]
    list_display = ["email", "name", "is_staff", "is_active", "date_joined"]
    search_fields = ["email", "name"]
    fieldsets = [
        (None, {"fields": ["email", "name", "password"]}),
        ("Permissions", {"fields": ["is_active", "is_staff", "is_superuser", "groups", "user_permissions"]}),
        ("Dates", {"fields": ["last_login", "date_joined"]}),
    ]
    add_fieldsets = [(None, {"classes": ["wide"], "fields": ["email", "password1", "password2"]})]


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Project)
class ProjectAdmin(UnscopedAdmin):
    list_display = ["slug", "name", "repo", "retention_days", "created_at"]
    search_fields = ["slug", "name", "repo"]
    # Set and audited by manage.py project_policy only (docs/security.md "Audit retention and legal hold").
    readonly_fields = ["audit_retention_days", "legal_hold_since", "legal_hold_reason"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(UnscopedAdmin):
    list_display = ["project", "user", "role", "created_at"]
    list_filter = ["role"]
    search_fields = ["user__email", "project__slug"]
    autocomplete_fields = ["user", "project"]


@admin.register(Invitation)
class InvitationAdmin(UnscopedAdmin):
    list_display = ["project", "email", "role", "expires_at", "accepted_at", "revoked_at"]
    search_fields = ["email", "project__slug"]
    readonly_fields = ["token"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "prefix", "user", "project", "scopes", "expires_at", "last_used_at", "revoked_at"]
    search_fields = ["name", "prefix", "user__email"]
    readonly_fields = ["prefix", "secret_hash", "last_used_at", "parent"]

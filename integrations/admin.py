"""Staff bind a repository of an installation to a project here (or through ``/api/v1/forge-bindings``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import admin

from integrations.models import ForgeCommentSettings, ForgeInstallation, RepositoryBinding

if TYPE_CHECKING:
    _InstallationAdminBase = admin.ModelAdmin[ForgeInstallation]
    _BindingAdminBase = admin.ModelAdmin[RepositoryBinding]
    _BindingInlineBase = admin.TabularInline[RepositoryBinding, ForgeInstallation]
    _CommentSettingsAdminBase = admin.ModelAdmin[ForgeCommentSettings]
else:  # Django's ModelAdmin is generic only in its stubs
    _InstallationAdminBase = _BindingAdminBase = _CommentSettingsAdminBase = admin.ModelAdmin
    _BindingInlineBase = admin.TabularInline


class BindingInline(_BindingInlineBase):
    model = RepositoryBinding
    extra = 0
    autocomplete_fields = ["project"]


@admin.register(ForgeInstallation)
class ForgeInstallationAdmin(_InstallationAdminBase):
    list_display = ["forge", "external_id", "account", "suspended", "deleted", "created_at"]
    list_filter = ["forge", "suspended", "deleted"]
    search_fields = ["account", "external_id"]
    inlines = [BindingInline]


@admin.register(RepositoryBinding)
class RepositoryBindingAdmin(_BindingAdminBase):
    list_display = ["full_name", "repository_id", "installation", "project", "created_at"]
    search_fields = ["full_name"]
    autocomplete_fields = ["project"]


@admin.register(ForgeCommentSettings)
class ForgeCommentSettingsAdmin(_CommentSettingsAdminBase):
    list_display = ["project", "show_titles_and_prompts", "updated_at"]
    autocomplete_fields = ["project"]

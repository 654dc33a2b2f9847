"""Staff's bindings API, the projects' pull requests and their PR-comment setting, under ``/api/v1/``."""

from django.urls import path

from integrations import api, pulls_api

urlpatterns = [
    path("forge-installations", api.InstallationsView.as_view(), name="api-forge-installations"),
    path("forge-bindings", api.BindingsView.as_view(), name="api-forge-bindings"),
    path("forge-bindings/<int:binding_id>", api.BindingView.as_view(), name="api-forge-binding"),
    path("projects/<slug:project>/pulls", pulls_api.PullRequestsView.as_view(), name="api-pulls"),
    path("projects/<slug:project>/pulls/<int:number>", pulls_api.PullRequestDetailView.as_view(), name="api-pull"),
    path("projects/<slug:project>/forge-comment", api.CommentSettingsView.as_view(), name="api-forge-comment"),
]

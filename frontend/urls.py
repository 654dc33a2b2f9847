from django.urls import path

from frontend.views import (
    access_log,
    audit_trail,
    conversation_page,
    insights,
    links,
    pages,
    pull_requests,
    session_files,
    sessions,
    share,
    shares,
)
from frontend.views.settings import ProjectExportView, ProjectSettingsView
from projects.pages import device_approve

P = "p/<slug:project>"
S = f"{P}/s/<uuid:session_id>"
urlpatterns = [
    path("", pages.dashboard, name="dashboard"),
    path("device", device_approve, name="device-approve"),
    path("invitations/<str:token>/", pages.invitation_accept, name="invitation-accept"),
    path(f"{P}/", sessions.SessionListView.as_view(), name="project-home"),
    path(S, sessions.SessionView.as_view(), name="session"),
    path(f"{S}/m/<int:index>", sessions.SessionMessageView.as_view(), name="session-message"),
    path(f"{S}/raw", sessions.SessionRawView.as_view(), name="session-raw"),
    path(f"{S}/access", access_log.SessionAccessLogView.as_view(), name="session-access"),
    path(f"{S}/delete", access_log.SessionDeleteView.as_view(), name="session-delete"),
    path(
        f"{S}/conversation",
        conversation_page.WholeConversationView.as_view(),
        name="whole-conversation",
    ),
    path(f"{P}/c/<str:sha>", links.CommitLinkView.as_view(), name="commit-link"),
    path(f"{P}/m/<uuid:message_uuid>", links.MessageLinkView.as_view(), name="message-link"),
    path(f"{P}/t/<path:task_id>", links.TaskLinkView.as_view(), name="task-link"),
    path(f"{P}/b/<path:branch>", links.BranchTimelineView.as_view(), name="branch"),
    path(f"{P}/pr/<int:number>", pull_requests.PullRequestView.as_view(), name="pull-request"),
    path(f"{P}/settings/", ProjectSettingsView.as_view(), name="project-settings"),
    path(f"{P}/settings/export", ProjectExportView.as_view(), name="project-export"),
    path(f"{P}/settings/shares", shares.ProjectSharesView.as_view(), name="project-shares"),
    path(f"{S}/share", shares.SessionShareView.as_view(), name="session-share"),
    path(f"{S}/files", session_files.SessionFilesView.as_view(), name="session-files"),
    path("share/<str:token>", share.SharedSessionView.as_view(), name="shared-session"),
    path("share/<str:token>/m/<int:index>", share.SharedSessionView.as_view(), name="shared-message"),
    path(f"{P}/insights", insights.InsightsView.as_view(), name="insights"),
    path(f"{P}/insights.csv", insights.InsightsCsvView.as_view(), name="insights-csv"),
    path(f"{P}/access-log", access_log.ProjectAccessLogView.as_view(), name="access-log"),
    path(f"{P}/audit", audit_trail.ProjectAuditView.as_view(), name="audit-trail"),
]

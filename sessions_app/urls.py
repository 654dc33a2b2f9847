from django.urls import path

from sessions_app import api
from sessions_app.api import uploads
from sessions_app.api.export import ProjectExportView
from sessions_app.api.projects import ProjectView

P = "projects/<slug:project>"
urlpatterns = [
    path("projects/<slug:project>", ProjectView.as_view(), name="api-project"),
    path(f"{P}/export", ProjectExportView.as_view(), name="api-project-export"),
    path(f"{P}/sessions", api.SessionsView.as_view(), name="api-sessions"),
    path(f"{P}/sessions/<uuid:session_id>", api.SessionDetailView.as_view(), name="api-session"),
    path(f"{P}/uploads", uploads.UploadsView.as_view(), name="api-uploads"),
    path(f"{P}/uploads/<uuid:upload_id>", uploads.UploadView.as_view(), name="api-upload"),
    path(f"{P}/uploads/<uuid:upload_id>/parts/<int:index>", uploads.UploadPartView.as_view(), name="api-upload-part"),
    path(f"{P}/uploads/<uuid:upload_id>/finish", uploads.UploadFinishView.as_view(), name="api-upload-finish"),
    path(f"{P}/sessions/<uuid:session_id>/messages", api.SessionMessagesView.as_view(), name="api-session-messages"),
    path(f"{P}/sessions/<uuid:session_id>/raw", api.SessionRawView.as_view(), name="api-session-raw"),
    path(f"{P}/tasks/<str:task_id>", api.TaskSessionsView.as_view(), name="api-task"),
    path(f"{P}/context", api.ContextView.as_view(), name="api-context"),
    path(f"{P}/insights", api.InsightsView.as_view(), name="api-insights"),
    path(f"{P}/access-log", api.AccessLogView.as_view(), name="api-access-log"),
    path(f"{P}/commits/relink", api.RelinkView.as_view(), name="api-relink"),
    path(f"{P}/commits/<str:sha>", api.CommitSessionsView.as_view(), name="api-commit"),
    path(f"{P}/commits/<str:sha>/attribution", api.CommitAttributionView.as_view(), name="api-commit-attribution"),
    path(
        f"{P}/commits/<str:sha>/attribution/match",
        api.CommitAttributionMatchView.as_view(),
        name="api-commit-attribution-match",
    ),
    path(f"{P}/commits/<str:sha>/why", api.CommitWhyView.as_view(), name="api-commit-why"),
    path(f"{P}/sessions/<uuid:session_id>/shares", api.SessionSharesView.as_view(), name="api-session-shares"),
    path(
        f"{P}/sessions/<uuid:session_id>/shares/<uuid:share_id>",
        api.SessionShareView.as_view(),
        name="api-session-share",
    ),
    path(
        f"{P}/sessions/<uuid:session_id>/attribution",
        api.SessionAttributionView.as_view(),
        name="api-session-attribution",
    ),
    path(f"{P}/agent-sessions/<str:agent_session_id>", api.AgentSessionView.as_view(), name="api-agent-session"),
    path(
        f"{P}/agent-sessions/<str:agent_session_id>/transcript",
        api.AgentTranscriptView.as_view(),
        name="api-agent-transcript",
    ),
]

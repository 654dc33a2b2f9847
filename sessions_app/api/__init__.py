"""REST endpoints of the product core; thin — services, selectors and serializers do the work."""

from sessions_app.api.agent import AgentSessionView, AgentTranscriptView, RelinkView
from sessions_app.api.attribution import (
    CommitAttributionMatchView,
    CommitAttributionView,
    CommitWhyView,
    SessionAttributionView,
)
from sessions_app.api.context import ContextView
from sessions_app.api.ingest import SessionsView
from sessions_app.api.insights import AccessLogView, InsightsView
from sessions_app.api.sessions import (
    CommitSessionsView,
    SessionDetailView,
    SessionMessagesView,
    SessionRawView,
    TaskSessionsView,
)
from sessions_app.api.shares import SessionSharesView, SessionShareView

__all__ = [
    "AccessLogView",
    "AgentSessionView",
    "AgentTranscriptView",
    "CommitAttributionMatchView",
    "CommitAttributionView",
    "CommitSessionsView",
    "CommitWhyView",
    "ContextView",
    "InsightsView",
    "RelinkView",
    "SessionAttributionView",
    "SessionDetailView",
    "SessionMessagesView",
    "SessionRawView",
    "SessionShareView",
    "SessionSharesView",
    "SessionsView",
    "TaskSessionsView",
]

"""Attribution endpoints: a session's and a commit's Agent Trace records, `why`, the fallback.

``GET …/sessions/{id}/attribution`` and ``GET …/commits/{sha}/attribution`` return Agent Trace
v0.1.0 records (agent-trace.dev). ``POST …/sessions/{id}/attribution`` stores one (400 naming
the field when it is refused; 403 to anyone but the session's author or a project admin).
``POST …/commits/{sha}/why`` and ``…/attribution/match`` only read — the client sends line
hashes too many for a query string — so a read-only token may call them (docs/attribution.md).
"""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from config.parsers import BoundedJSONParser
from projects.access import READ_ONLY, ProjectAPIView, acting_user
from projects.errors import DomainError
from projects.models import Role
from sessionledger.core import attribution
from sessions_app.api.common import SessionObjectView
from sessions_app.attribution import explain, selectors, services
from sessions_app.audit import access_record
from sessions_app.selectors import commit_prefix
from sessions_app.serializers import ErrorSerializer
from sessions_app.throttles import QueryThrottle, WriteThrottle

MAX_MATCH_FILES = 500
MAX_MATCH_LINES = 100_000
RECORD = OpenApiResponse(OpenApiTypes.OBJECT, description="an Agent Trace v0.1.0 record (agent-trace.dev)")
HASH = r"^[0-9a-f]{16}$"


class AttributionLine(serializers.ListField):
    """``[line number, line hash, trivial]``: an added line as the client's matching knows it."""

    child = serializers.JSONField()
    min_length = 3
    max_length = 3


class AttributionFile(serializers.Serializer):
    path = serializers.CharField(max_length=4096)
    lines = serializers.ListField(child=AttributionLine(), max_length=MAX_MATCH_LINES)


class MatchQuery(serializers.Serializer):
    files = serializers.ListField(child=AttributionFile(), max_length=MAX_MATCH_FILES)


class WhyQuery(serializers.Serializer):
    path = serializers.CharField(max_length=4096)
    line = serializers.IntegerField(min_value=1)
    hash = serializers.RegexField(HASH, required=False, allow_blank=True, default="")
    added = serializers.ListField(
        child=AttributionLine(), max_length=MAX_MATCH_LINES, required=False, help_text="the file's added lines"
    )


def _lines(rows: list[list[Any]], field: str) -> list[attribution.Line]:
    lines = []
    for row in rows:
        number, value, trivial = row
        if not isinstance(number, int) or number < 1 or not isinstance(value, str) or not isinstance(trivial, bool):
            raise DomainError("invalid", "A line is [number ≥ 1, 16-hex hash, trivial].", field=field)
        lines.append(attribution.Line(number, value[:16], trivial))
    return sorted(lines, key=lambda line: line.number)


class SessionAttributionView(SessionObjectView):
    required_roles = {**READ_ONLY, "POST": Role.MEMBER}
    parser_classes = [BoundedJSONParser]

    @extend_schema(responses={200: RECORD})
    def get(self, request: Request, project: str, session_id: str) -> Response:
        found = selectors.attribution_of_session(session=self.get_session(session_id))
        if found is None or found.record is None:
            raise Http404
        return Response(selectors.with_session(found), content_type="application/json")

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        responses={
            201: RECORD,
            400: OpenApiResponse(ErrorSerializer, description="refused; error.field names it"),
            403: OpenApiResponse(ErrorSerializer, description="not the session's author nor a project admin"),
        },
    )
    def post(self, request: Request, project: str, session_id: str) -> Response:
        session = self.get_session(session_id)
        services.check_author(session=session, user_id=acting_user(request).pk, role=self.membership.role)
        found = services.attribution_store(session=session, data=request.body)
        found.session = session
        return Response(selectors.with_session(found), status=status.HTTP_201_CREATED)


class CommitAttributionView(ProjectAPIView):
    required_roles = READ_ONLY
    throttle_classes = [QueryThrottle]

    @extend_schema(
        responses={
            200: inline_serializer(
                "CommitAttribution",
                {
                    "commit": serializers.CharField(),
                    "sessions": serializers.IntegerField(help_text="sessions linked to the commit"),
                    "records": serializers.ListField(child=serializers.JSONField(), help_text="Agent Trace records"),
                },
            )
        }
    )
    def get(self, request: Request, project: str, sha: str) -> Response:
        prefix = commit_prefix(sha)
        records = selectors.records_for_commit(project=self.project, sha=prefix)
        sessions = len(selectors.commit_sessions(project=self.project, sha=prefix))
        return Response({"commit": prefix, "sessions": sessions, "records": records})


class CommitAttributionMatchView(ProjectAPIView):
    required_roles = {**READ_ONLY, "POST": Role.VIEWER}
    read_methods = frozenset({"POST"})
    throttle_classes = [QueryThrottle, WriteThrottle]
    parser_classes = [BoundedJSONParser]

    @extend_schema(request=MatchQuery, responses={200: RECORD})
    def post(self, request: Request, project: str, sha: str) -> Response:
        prefix = commit_prefix(sha)
        sessions = selectors.commit_sessions(project=self.project, sha=prefix)
        if not sessions:
            raise Http404
        query = MatchQuery(data=request.data)
        query.is_valid(raise_exception=True)
        added = {f["path"]: _lines(f["lines"], "files") for f in query.validated_data["files"]}
        return Response(selectors.matched_record(project=self.project, sha=prefix, added=added, sessions=sessions))


class CommitWhyView(ProjectAPIView):
    required_roles = {**READ_ONLY, "POST": Role.VIEWER}
    read_methods = frozenset({"POST"})
    throttle_classes = [QueryThrottle, WriteThrottle]
    parser_classes = [BoundedJSONParser]

    @extend_schema(request=WhyQuery, responses={200: OpenApiTypes.OBJECT})
    def post(self, request: Request, project: str, sha: str) -> Response:
        prefix = commit_prefix(sha)
        if not selectors.commit_sessions(project=self.project, sha=prefix):
            raise Http404  # no session of this commit here (another tenant's commit alike)
        query = WhyQuery(data=request.data)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        added = _lines(data["added"], "added") if data.get("added") else None
        answer, session = explain.why(
            project=self.project, sha=prefix, path=data["path"], line=data["line"], line_hash=data["hash"], added=added
        )
        if session is not None:
            access_record(session=session, request=request, via="why")
        return Response(answer)

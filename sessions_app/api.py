"""Ingest and query endpoints (thin: ``ingest``, ``selectors`` and serializers do the work)."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.http import FileResponse, Http404, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.pagination import CursorPagination, LimitOffsetPagination
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from projects.access import READ_ONLY, ProjectAPIView
from projects.errors import ApiError, DomainError
from sessions_app import blobs, context, selectors, stitch
from sessions_app.filters import SessionFilter
from sessions_app.ingest import Upload, session_ingest
from sessions_app.links import session_api_url, session_web_url
from sessions_app.models import Session
from sessions_app.relink import relink_commits
from sessions_app.serializers import (
    HEX40,
    ROW_COLUMNS,
    ErrorSerializer,
    IngestAcceptedSerializer,
    IngestMetadataSerializer,
    MessageSerializer,
    SessionDetailSerializer,
    SessionSerializer,
    session_representation,
)
from sessions_app.throttles import IngestThrottle, QueryThrottle

ERRORS = {
    code: OpenApiResponse(ErrorSerializer, description=text)
    for code, text in {
        400: "malformed request",
        401: "no or invalid token",
        403: "role or token scope too low",
        404: "no such project for you, or no such object",
        429: "rate limited (Retry-After)",
    }.items()
}
INGEST_ERRORS = {
    **ERRORS,
    **{
        code: OpenApiResponse(ErrorSerializer, description=text)
        for code, text in {
            409: "another upload already holds this commit's checkpoint (error.url points at it)",
            413: "over the size limit (error.limit)",
            415: "not multipart/form-data",
            503: "object storage unavailable (Retry-After); nothing was stored",
        }.items()
    },
}


class SessionCursorPagination(CursorPagination):
    ordering = ("-created_at", "-id")
    page_size = 50
    page_size_query_param = "limit"
    max_page_size = 200


class MessagePagination(LimitOffsetPagination):
    default_limit = 200
    max_limit = 1000


class SessionsView(ProjectAPIView):
    """``GET`` lists sessions (keyset paginated, newest first); ``POST`` ingests one."""

    parser_classes = [MultiPartParser]
    throttle_classes = [IngestThrottle, QueryThrottle]

    @extend_schema(
        parameters=[OpenApiParameter("cursor", str), OpenApiParameter("limit", int)],
        filters=True,
        responses={200: SessionSerializer(many=True), **ERRORS},
    )
    def get(self, request: Request, project: str) -> Response:
        queryset = SessionFilter(request.query_params, queryset=selectors.session_queryset(project=self.project))
        if not queryset.is_valid():
            raise serializers.ValidationError(queryset.errors)
        paginator = SessionCursorPagination()
        page = paginator.paginate_queryset(queryset.qs.values(*ROW_COLUMNS), request, view=self)
        return paginator.get_paginated_response([session_representation(row, self.project.slug) for row in page])

    @extend_schema(
        request={
            "multipart/form-data": inline_serializer(
                "SessionUpload",
                {
                    "metadata": serializers.JSONField(help_text="IngestMetadata as JSON text"),
                    "transcript": serializers.FileField(help_text="gzip JSONL"),
                    "subagent": serializers.ListField(
                        child=serializers.FileField(),
                        required=False,
                        help_text="gzip JSONL per sub-agent; file name = agent id",
                    ),
                },
            )
        },
        parameters=[OpenApiParameter("Idempotency-Key", str, OpenApiParameter.HEADER)],
        responses={202: IngestAcceptedSerializer, 200: IngestAcceptedSerializer, **INGEST_ERRORS},
    )
    def post(self, request: Request, project: str) -> Response:
        _refuse_oversized_body(request)
        metadata = _metadata(request)
        transcript = request.FILES.get("transcript")
        if transcript is None:
            raise DomainError("missing", "The upload needs a gzip 'transcript' part.", field="transcript")
        result = session_ingest(
            project=self.project,
            author=request.user,
            metadata=metadata,
            transcript=Upload(transcript, transcript.size),
            subagents=[Upload(f, f.size, _agent_id(f.name)) for f in request.FILES.getlist("subagent")],
            idempotency_key=request.headers.get("Idempotency-Key") or None,
        )
        body = {
            "id": str(result.session.pk),
            "status": result.session.status,
            "url": session_api_url(result.session),
            "web_url": session_web_url(result.session),
        }
        return Response(body, status=status.HTTP_202_ACCEPTED if result.created else status.HTTP_200_OK)


def _refuse_oversized_body(request: Request) -> None:
    limit = settings.SESSIONLEDGER_MAX_UPLOAD_BYTES
    try:
        length = int(request.headers.get("Content-Length") or 0)
    except ValueError:
        length = 0
    if length > limit:
        raise ApiError(
            413, "too_large", f"Upload refused: the request body exceeds {limit:,} bytes.", extra={"limit": limit}
        )


def _metadata(request: Request) -> dict[str, Any]:
    text = request.data.get("metadata")
    if text is None:
        raise DomainError("missing", "The upload needs a 'metadata' part (JSON).", field="metadata")
    try:
        data = json.loads(text.read() if hasattr(text, "read") else text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise DomainError("invalid_json", f"metadata is not valid JSON: {exc}", field="metadata") from None
    if not isinstance(data, dict):
        raise DomainError("invalid_json", "metadata must be a JSON object.", field="metadata")
    serializer = IngestMetadataSerializer(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def _agent_id(filename: str | None) -> str:
    name = (filename or "").rsplit("/", 1)[-1]
    for suffix in (".gz", ".jsonl"):
        name = name.removesuffix(suffix)
    return name.removeprefix("agent-")


class SessionObjectView(ProjectAPIView):
    required_roles = READ_ONLY
    throttle_classes = [QueryThrottle]

    def get_session(self, session_id: object) -> Session:
        session = selectors.session_get(project=self.project, session_id=session_id)
        if session is None:
            raise Http404
        return session


class SessionDetailView(SessionObjectView):
    @extend_schema(responses={200: SessionDetailSerializer, **ERRORS})
    def get(self, request: Request, project: str, session_id: str) -> Response:
        return Response(SessionDetailSerializer(self.get_session(session_id)).data)


class MessagesQuery(serializers.Serializer):
    role = serializers.ListField(
        child=serializers.ChoiceField(["user", "assistant", "tool", "system", "thinking"]), required=False
    )
    kind = serializers.ListField(
        child=serializers.ChoiceField(["prompt", "text", "thinking", "tool_use", "tool_result", "summary", "system"]),
        required=False,
    )
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)
    q = serializers.CharField(required=False, allow_blank=True)


class SessionMessagesView(SessionObjectView):
    @extend_schema(
        parameters=[MessagesQuery, OpenApiParameter("offset", int), OpenApiParameter("limit", int)],
        responses={200: MessageSerializer(many=True), **ERRORS},
    )
    def get(self, request: Request, project: str, session_id: str) -> Response:
        query = MessagesQuery(
            data={
                "role": request.query_params.getlist("role"),
                "kind": request.query_params.getlist("kind"),
                **{k: request.query_params[k] for k in ("since", "until", "q") if k in request.query_params},
            }
        )
        query.is_valid(raise_exception=True)
        document = selectors.session_document(session=self.get_session(session_id))
        if document is None:
            raise DomainError(
                "processing", "This session is still being processed; try again shortly.", status_code=409
            )
        messages = selectors.filter_messages(
            document["messages"],
            roles=query.validated_data.get("role"),
            kinds=query.validated_data.get("kind"),
            since=query.validated_data.get("since"),
            until=query.validated_data.get("until"),
            text=query.validated_data.get("q"),
        )
        paginator = MessagePagination()
        page = paginator.paginate_queryset(messages, request, view=self)
        return paginator.get_paginated_response(page)


class SessionRawView(SessionObjectView):
    @extend_schema(responses={(200, "application/gzip"): OpenApiTypes.BINARY, **ERRORS})
    def get(self, request: Request, project: str, session_id: str) -> FileResponse:
        session = self.get_session(session_id)
        stream = blobs.open_stream(session.raw_storage_key)
        response = FileResponse(
            stream, content_type="application/gzip", as_attachment=True, filename=f"{session.pk}.jsonl.gz"
        )
        response["Content-Encoding"] = "identity"
        return response


class CommitSessionsView(ProjectAPIView):
    required_roles = READ_ONLY
    throttle_classes = [QueryThrottle]

    @extend_schema(responses={200: SessionSerializer(many=True), **ERRORS})
    def get(self, request: Request, project: str, sha: str) -> Response:
        sessions = selectors.sessions_for_commit(project=self.project, sha=sha)[:200]
        return Response({"results": SessionSerializer(sessions, many=True).data})


class TaskSessionsView(ProjectAPIView):
    required_roles = READ_ONLY
    throttle_classes = [QueryThrottle]

    @extend_schema(responses={200: SessionSerializer(many=True), **ERRORS})
    def get(self, request: Request, project: str, task_id: str) -> Response:
        sessions = selectors.sessions_for_task(project=self.project, task_id=task_id)[:200]
        return Response({"results": SessionSerializer(sessions, many=True).data})


class ContextQuery(serializers.Serializer):
    branch = serializers.CharField(required=False, allow_blank=True, default="")
    files = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    budget = serializers.IntegerField(
        required=False, min_value=200, max_value=context.MAX_BUDGET, default=context.DEFAULT_BUDGET
    )


class ContextView(ProjectAPIView):
    """The AI digest of SPEC §6: relevant prior sessions within a character budget."""

    required_roles = READ_ONLY
    throttle_classes = [QueryThrottle]

    @extend_schema(
        parameters=[ContextQuery],
        responses={
            200: inline_serializer(
                "Context",
                {
                    "text": serializers.CharField(),
                    "length": serializers.IntegerField(),
                    "budget": serializers.IntegerField(),
                    "sessions": serializers.ListField(child=serializers.DictField()),
                },
            ),
            **ERRORS,
        },
    )
    def get(self, request: Request, project: str) -> Response:
        files = [f for value in request.query_params.getlist("files") for f in value.split(",") if f]
        query = ContextQuery(data={**request.query_params.dict(), "files": files})
        query.is_valid(raise_exception=True)
        digest = context.context_digest(project=self.project, **query.validated_data)
        return Response(
            {
                "text": digest.text,
                "length": len(digest.text),
                "budget": digest.budget,
                "sessions": context.digest_sessions(digest),
            }
        )


def _gap_list(chain: stitch.Chain) -> list[dict[str, Any]]:
    return [
        {
            "after": str(gap.after.pk) if gap.after else None,
            "expected_start": gap.expected_start,
            "actual_start": gap.actual_start,
        }
        for gap in chain.gaps
    ]


class AgentSessionMixin:
    def get_chain(self, agent_session_id: str) -> stitch.Chain:
        chain = stitch.agent_session_chain(project=self.project, agent_session_id=agent_session_id)
        if not chain.segments:
            raise Http404
        return chain


class AgentSessionView(AgentSessionMixin, ProjectAPIView):
    """An agent session's captured segments in order, with their turns' prompts and any gaps."""

    required_roles = READ_ONLY
    throttle_classes = [QueryThrottle]

    @extend_schema(
        responses={
            200: inline_serializer(
                "AgentSession",
                {
                    "agent_session_id": serializers.CharField(),
                    "segments": serializers.ListField(child=serializers.DictField()),
                    "gaps": serializers.ListField(child=serializers.DictField()),
                    "transcript_url": serializers.URLField(),
                },
            ),
            **ERRORS,
        }
    )
    def get(self, request: Request, project: str, agent_session_id: str) -> Response:
        chain = self.get_chain(agent_session_id)
        first_turn, segments = 1, []
        for session in chain.segments:
            segments.append(
                {
                    **SessionSerializer(session).data,
                    "first_turn": first_turn,
                    "prompts": session.digest.get("prompts", []),
                }
            )
            first_turn += session.turn_count
        base = request.build_absolute_uri(request.path)
        return Response(
            {
                "agent_session_id": agent_session_id,
                "segments": segments,
                "gaps": _gap_list(chain),
                "transcript_url": f"{base}/transcript",
            }
        )


class AgentTranscriptView(AgentSessionMixin, ProjectAPIView):
    """The agent session's raw JSONL stitched from its segments, optionally cut after turn N (for fork)."""

    required_roles = READ_ONLY
    throttle_classes = [QueryThrottle]

    @extend_schema(
        parameters=[
            OpenApiParameter("until_turn", int, description="keep turns 1..N (N ≥ 1)"),
            OpenApiParameter("allow_gaps", bool),
        ],
        responses={(200, "application/x-ndjson"): OpenApiTypes.BINARY, 409: ErrorSerializer, **ERRORS},
    )
    def get(self, request: Request, project: str, agent_session_id: str) -> HttpResponse:
        chain = self.get_chain(agent_session_id)
        if chain.gaps and request.query_params.get("allow_gaps") not in ("1", "true"):
            raise DomainError(
                "gap",
                "Captured segments of this agent session do not chain; bytes are missing.",
                status_code=409,
                extra={"gaps": _gap_list(chain)},
            )
        until = request.query_params.get("until_turn")
        if until is not None and (not until.isdigit() or int(until) < 1):
            raise DomainError("invalid", "until_turn is a whole number ≥ 1.", field="until_turn")
        body = stitch.stitched_transcript(chain, until_turn=int(until) if until else None)
        response = HttpResponse(body, content_type="application/x-ndjson")
        response["X-Sessionledger-Segments"] = ",".join(str(s.pk) for s in chain.segments)
        return response


class RelinkPair(serializers.Serializer):
    old = serializers.RegexField(HEX40)
    new = serializers.RegexField(HEX40)


class RelinkView(ProjectAPIView):
    """Record that rebased/squashed commits carry older commits' sessions (pairs matched by the client)."""

    throttle_classes = [QueryThrottle]

    @extend_schema(
        request=inline_serializer("Relink", {"pairs": RelinkPair(many=True)}),
        responses={200: inline_serializer("Relinked", {"linked": serializers.IntegerField()}), **ERRORS},
    )
    def post(self, request: Request, project: str) -> Response:
        pairs = RelinkPair(data=request.data.get("pairs"), many=True)
        pairs.is_valid(raise_exception=True)
        linked = relink_commits(project=self.project, user=request.user, pairs=pairs.validated_data)
        return Response({"linked": linked})

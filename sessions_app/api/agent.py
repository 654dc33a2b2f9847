"""Agent sessions (stitch for fork/restore) and commit relinks."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from projects.access import READ_ONLY, ProjectAPIView, acting_user
from projects.errors import DomainError
from projects.models import Project
from sessions_app import blobs, stitch
from sessions_app.audit import access_record
from sessions_app.relink import relink_commits
from sessions_app.serializers import (
    HEX40,
    ErrorSerializer,
    SessionSerializer,
)
from sessions_app.throttles import QueryThrottle, WriteThrottle


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
    project: Project  # set by ProjectAPIView.initial

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
                    "agent": serializers.CharField(help_text="the agent that recorded it: claude-code, codex, gemini"),
                    "segments": serializers.ListField(child=serializers.DictField()),
                    "gaps": serializers.ListField(child=serializers.DictField()),
                    "files": serializers.ListField(
                        child=serializers.DictField(),
                        help_text="sub-agent transcripts and persisted tool outputs: {path, kind, bytes}; "
                        "fetch one with transcript?part=<path>",
                    ),
                    "transcript_url": serializers.URLField(),
                },
            ),
        }
    )
    def get(self, request: Request, project: str, agent_session_id: str) -> Response:
        chain = self.get_chain(agent_session_id)
        first_turn, segments = 1, []
        for session in chain.segments:
            segments.append(
                {
                    **SessionSerializer(session).data,
                    "commit_message": session.commit_message,  # a step's label in `turns`
                    "first_turn": first_turn,
                    "prompts": session.digest.get("prompts", []),
                    "transcript_bytes": stitch.transcript_bytes(session),
                }
            )
            first_turn += session.turn_count
        base = request.build_absolute_uri(request.path)
        return Response(
            {
                "agent_session_id": agent_session_id,
                "agent": chain.segments[0].agent,
                "segments": segments,
                "gaps": _gap_list(chain),
                "files": stitch.files(chain),
                "transcript_url": f"{base}/transcript",
            }
        )


class AgentTranscriptView(AgentSessionMixin, ProjectAPIView):
    """The agent session's raw JSONL stitched from its segments, optionally cut after turn N or
    after a step (for fork); or, with ``part``, one of its files (for restore)."""

    required_roles = READ_ONLY
    throttle_classes = [QueryThrottle]

    @extend_schema(
        parameters=[
            OpenApiParameter("until_turn", int, description="keep turns 1..N (N ≥ 1)"),
            OpenApiParameter(
                "until",
                str,
                description="cut after this step: a message uuid (kept with the results of its tool calls) or "
                "a commit (7-40 hex) captured in one of the segments (cut where it was captured). "
                "Not with until_turn. Malformed: 400; no such message or commit: 404.",
            ),
            OpenApiParameter(
                "part",
                str,
                description="a path from the agent session's `files` (subagents/agent-<id>.jsonl, "
                "agent-<id>.jsonl, tool-results/<name>) instead of the transcript; 404 when it has none",
            ),
            OpenApiParameter("allow_gaps", bool),
        ],
        responses={
            (200, "application/x-ndjson"): OpenApiTypes.BINARY,
            400: ErrorSerializer,
            404: ErrorSerializer,
            409: ErrorSerializer,
        },
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
        part = request.query_params.get("part")
        body = _part(chain, part) if part is not None else _transcript(chain, request.query_params)
        for session in chain.segments:
            access_record(session=session, request=request, via="transcript")
        kind = "application/octet-stream" if part and not part.endswith(".jsonl") else "application/x-ndjson"
        response = HttpResponse(body, content_type=kind)
        response["X-Sessionledger-Segments"] = ",".join(str(s.pk) for s in chain.segments)
        return response


def _transcript(chain: stitch.Chain, params: Any) -> bytes:
    until_turn, until = params.get("until_turn"), params.get("until")
    if until_turn is not None and until is not None:
        raise DomainError("invalid", "Give until_turn or until, not both.", field="until")
    if until_turn is not None and not (
        until_turn.isascii() and until_turn.isdigit() and 0 < len(until_turn) < 10 and int(until_turn)
    ):
        raise DomainError("invalid", "until_turn is a whole number ≥ 1.", field="until_turn")
    try:
        return stitch.stitched_transcript(chain, until_turn=int(until_turn) if until_turn else None, until=until)
    except blobs.NotGzip as exc:  # stored before ingest counted gzip members
        message = f"A segment's stored transcript cannot be read: {exc}."
        raise DomainError("unreadable", message, status_code=409) from None
    except stitch.BadStep as exc:
        raise DomainError("invalid", f"{exc}.", field="until") from None
    except stitch.UnknownStep as exc:
        raise DomainError("not_found", f"{str(exc).capitalize()}.", field="until", status_code=404) from None


def _part(chain: stitch.Chain, path: str) -> bytes:
    data = stitch.file_bytes(chain, path) if len(path) <= 300 else None
    if data is None:
        raise DomainError("not_found", "This agent session has no such file.", field="part", status_code=404)
    return data


class RelinkPair(serializers.Serializer):
    old = serializers.RegexField(HEX40)
    new = serializers.RegexField(HEX40)


class RelinkRequest(serializers.Serializer):
    pairs = RelinkPair(many=True, max_length=10_000)  # type: ignore[call-arg]  # many=True: ListSerializer's


class RelinkView(ProjectAPIView):
    """Record that rebased/squashed commits carry older commits' sessions (pairs matched by the client)."""

    throttle_classes = [QueryThrottle, WriteThrottle]

    @extend_schema(
        request=RelinkRequest,
        responses={200: inline_serializer("Relinked", {"linked": serializers.IntegerField()})},
    )
    def post(self, request: Request, project: str) -> Response:
        body = RelinkRequest(data=request.data)
        body.is_valid(raise_exception=True)
        linked = relink_commits(project=self.project, user=acting_user(request), pairs=body.validated_data["pairs"])
        return Response({"linked": linked})

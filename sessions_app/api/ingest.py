"""POST (ingest) and GET (list) of /projects/{project}/sessions."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from config import metrics
from projects.access import ProjectAPIView, acting_user
from projects.errors import ApiError, DomainError
from sessions_app import backpressure, parts, selectors
from sessions_app.api.common import INGEST_ERRORS, SessionCursorPagination, keyset_page
from sessions_app.attribution.services import attribution_from_ingest
from sessions_app.filters import SessionFilter
from sessions_app.ingest import IngestResult, session_ingest
from sessions_app.links import session_api_url, session_web_url
from sessions_app.models import Session
from sessions_app.parts import Upload
from sessions_app.serializers import (
    ROW_COLUMNS,
    IngestAcceptedSerializer,
    IngestMetadataSerializer,
    SessionSerializer,
    session_representation,
)
from sessions_app.throttles import IngestThrottle, QueryThrottle
from sessions_app.validation import refuse_unstorable_text

MAX_IDEMPOTENCY_KEY = 200  # the column's length


class SessionsView(ProjectAPIView):
    """``GET`` lists sessions (keyset paginated, newest first); ``POST`` ingests one."""

    parser_classes = [MultiPartParser]
    throttle_classes = [IngestThrottle, QueryThrottle]

    @extend_schema(
        parameters=[OpenApiParameter("cursor", str), OpenApiParameter("limit", int)],
        filters=True,
        responses={200: keyset_page("SessionPage", SessionSerializer(many=True))},
    )
    def get(self, request: Request, project: str) -> Response:
        queryset = SessionFilter(request.query_params, queryset=selectors.session_queryset(project=self.project))
        if not queryset.is_valid():
            raise serializers.ValidationError(queryset.errors)
        paginator = SessionCursorPagination()
        page: list[Any] = paginator.paginate_queryset(queryset.qs.values(*ROW_COLUMNS), request, view=self) or []
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
                    "attribution": serializers.FileField(
                        required=False,
                        help_text="an Agent Trace record (JSON) of the commit's added lines; a refused record "
                        "does not refuse the session (see the 202 body's `attribution`)",
                    ),
                    "tool_result": serializers.ListField(
                        child=serializers.FileField(),
                        required=False,
                        help_text="gzip of a large tool output Claude Code saved in <session>/tool-results/; "
                        "file name = <name>.gz",
                    ),
                },
            )
        },
        parameters=[OpenApiParameter("Idempotency-Key", str, OpenApiParameter.HEADER)],
        responses={202: IngestAcceptedSerializer, 200: IngestAcceptedSerializer, **INGEST_ERRORS},
    )
    def post(self, request: Request, project: str) -> Response:
        if self.project.archived_at is not None:
            raise DomainError(
                "archived", "This project is archived: it keeps its sessions and takes no new ones.", status_code=403
            )
        _refuse_oversized_body(request)
        backpressure.refuse_when_behind(self.project)  # before the body is read or anything stored
        form = request.data if isinstance(request.data, dict) else {}
        result, body = ingest_form(self, request, form, request.FILES, idempotency_key(request))
        return Response(body, status=status.HTTP_202_ACCEPTED if result.created else status.HTTP_200_OK)

    def finalize_response(self, request: Request, response: Response, *args: Any, **kwargs: Any) -> Any:
        """Every upload answered, refusals included (auth, throttle, size, storage), counted by status."""
        if request.method == "POST":
            metrics.UPLOADS.labels(str(response.status_code)).inc()
        return super().finalize_response(request, response, *args, **kwargs)


def ingest_form(
    view: ProjectAPIView, request: Request, form: Any, files: Any, key: str | None
) -> tuple[IngestResult, dict[str, Any]]:
    """Ingest one upload's multipart form (one request, or a resumable upload's joined parts):
    (the result, the answer's body)."""
    metadata = _metadata(form, files)
    transcript = files.get("transcript")
    if transcript is None:
        raise DomainError("missing", "The upload needs a gzip 'transcript' part.", field="transcript")
    result = session_ingest(
        project=view.project,
        author=acting_user(request),
        metadata=metadata,
        transcript=Upload(transcript, transcript.size),
        subagents=[Upload(f, f.size, _agent_id(f.name)) for f in files.getlist("subagent")]
        + parts.tool_result_uploads(files.getlist("tool_result")),
        idempotency_key=key,
    )
    body: dict[str, Any] = session_answer(result.session)
    if (part := files.get("attribution")) is not None:
        data = part.read(settings.SESSIONLEDGER_MAX_ATTRIBUTION_BYTES + 1)
        body["attribution"] = attribution_from_ingest(
            session=result.session, data=data, user_id=acting_user(request).pk, role=view.membership.role
        )
    return result, body


def session_answer(session: Session) -> dict[str, Any]:
    return {
        "id": str(session.pk),
        "status": session.status,
        "url": session_api_url(session),
        "web_url": session_web_url(session),
    }


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


def _metadata(form: Any, files: Any) -> dict[str, Any]:
    # a text field, or a file part: Django keeps those in FILES (DRF's request.data has both)
    data = _metadata_json(form.get("metadata") or files.get("metadata"))
    refuse_unstorable_text(data)
    serializer = IngestMetadataSerializer(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def _metadata_json(part: Any) -> dict[str, Any]:
    """The metadata part, text field or file part alike, read only up to its byte limit."""
    if part is None:
        raise DomainError("missing", "The upload needs a 'metadata' part (JSON).", field="metadata")
    limit = settings.SESSIONLEDGER_MAX_METADATA_BYTES
    text = part.read(limit + 1) if hasattr(part, "read") else part.encode()
    if len(text) > limit:
        raise DomainError.too_large(f"metadata refused: it exceeds {limit:,} bytes.", limit=limit, field="metadata")
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise DomainError("invalid_json", f"metadata is not valid JSON: {exc}", field="metadata") from None
    except RecursionError:
        raise DomainError("invalid_json", "metadata is nested too deeply.", field="metadata") from None
    if not isinstance(data, dict):
        raise DomainError("invalid_json", "metadata must be a JSON object.", field="metadata")
    return data


def idempotency_key(request: Request) -> str | None:
    key = request.headers.get("Idempotency-Key") or None
    if key is not None and not (len(key) <= MAX_IDEMPOTENCY_KEY and key.isascii() and key.isprintable()):
        raise DomainError(
            "invalid",
            f"Idempotency-Key is at most {MAX_IDEMPOTENCY_KEY} printable ASCII characters.",
            field="Idempotency-Key",
        )
    return key


def _agent_id(filename: str | None) -> str:
    name = (filename or "").rsplit("/", 1)[-1]
    for suffix in (".gz", ".jsonl"):
        name = name.removesuffix(suffix)
    return name.removeprefix("agent-")

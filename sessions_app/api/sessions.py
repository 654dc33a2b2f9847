"""One session: detail, messages, raw; commit and task lookups."""

from __future__ import annotations

from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from projects.access import READ_ONLY, ProjectAPIView, acting_user
from projects.errors import DomainError
from projects.models import Role
from sessionledger.core.formats.base import KINDS, ROLES
from sessions_app import blobs, selectors
from sessions_app.api.common import (
    OffsetPagination,
    SessionObjectView,
    offset_page,
    result_list,
    session_list_items,
)
from sessions_app.audit import access_record
from sessions_app.serializers import (
    MessageSerializer,
    SessionDetailSerializer,
    SessionSerializer,
)
from sessions_app.services import session_delete
from sessions_app.throttles import QueryThrottle


class SessionDetailView(SessionObjectView):
    required_roles = {**READ_ONLY, "DELETE": Role.ADMIN}

    @extend_schema(responses={200: SessionDetailSerializer})
    def get(self, request: Request, project: str, session_id: str) -> Response:
        return Response(SessionDetailSerializer(self.get_session(session_id)).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, project: str, session_id: str) -> Response:
        session = self.get_session(session_id)
        access_record(session=session, request=request, via="delete")  # as the page does
        session_delete(session=session, by=acting_user(request).email)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MessagesQuery(serializers.Serializer):
    role = serializers.ListField(
        child=serializers.ChoiceField(
            list(ROLES),
            error_messages={"invalid_choice": '"{input}" is not a role; thinking is a kind (kind=thinking).'},
        ),
        required=False,
        help_text="the message's own role: thinking is role assistant, kind thinking",
    )
    kind = serializers.ListField(
        child=serializers.ChoiceField(list(KINDS)),
        required=False,
    )
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)
    q = serializers.CharField(required=False, allow_blank=True)


class SessionMessagesView(SessionObjectView):
    @extend_schema(
        parameters=[MessagesQuery, OpenApiParameter("offset", int), OpenApiParameter("limit", int)],
        responses={200: offset_page("MessagePage", MessageSerializer(many=True))},
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
        session = self.get_session(session_id)
        document = selectors.session_document(session=session)
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
        access_record(session=session, request=request, via="api")
        paginator = OffsetPagination()
        page = paginator.paginate_queryset(messages, request, view=self)
        return paginator.get_paginated_response(page)


class SessionRawView(SessionObjectView):
    @extend_schema(responses={(200, "application/gzip"): OpenApiTypes.BINARY})
    def get(self, request: Request, project: str, session_id: str) -> FileResponse:
        session = self.get_session(session_id)
        stream = blobs.open_stream(session.raw_storage_key)
        access_record(session=session, request=request, via="raw")
        response = FileResponse(
            stream, content_type="application/gzip", as_attachment=True, filename=f"{session.pk}.jsonl.gz"
        )
        response["Content-Encoding"] = "identity"
        return response


class CommitSessionsView(ProjectAPIView):
    required_roles = READ_ONLY
    throttle_classes = [QueryThrottle]

    @extend_schema(responses={200: result_list("CommitSessions", SessionSerializer(many=True))})
    def get(self, request: Request, project: str, sha: str) -> Response:
        sessions = selectors.sessions_for_commit(project=self.project, sha=sha)
        return Response({"results": session_list_items(sessions, self.project)})


class TaskSessionsView(ProjectAPIView):
    required_roles = READ_ONLY
    throttle_classes = [QueryThrottle]

    @extend_schema(responses={200: result_list("TaskSessions", SessionSerializer(many=True))})
    def get(self, request: Request, project: str, task_id: str) -> Response:
        sessions = selectors.sessions_for_task(project=self.project, task_id=task_id)
        return Response({"results": session_list_items(sessions, self.project)})

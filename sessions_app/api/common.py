"""Shared pieces of the session endpoints: documented errors, pagination, the session base view."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiResponse
from rest_framework.pagination import CursorPagination, LimitOffsetPagination

from projects.access import READ_ONLY, ProjectAPIView
from sessions_app import selectors
from sessions_app.models import Session
from sessions_app.serializers import (
    ErrorSerializer,
)
from sessions_app.throttles import QueryThrottle

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


class OffsetPagination(LimitOffsetPagination):
    default_limit = 200
    max_limit = 1000


class SessionObjectView(ProjectAPIView):
    required_roles = READ_ONLY
    throttle_classes = [QueryThrottle]

    def get_session(self, session_id: object) -> Session:
        session = selectors.session_get(project=self.project, session_id=session_id)
        if session is None:
            raise Http404
        return session

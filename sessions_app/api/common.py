"""Shared pieces of the session endpoints: documented errors, pagination, the session base view."""

from __future__ import annotations

from typing import Any, cast

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Field, Model, QuerySet
from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.pagination import Cursor, CursorPagination, LimitOffsetPagination
from rest_framework.request import Request

from projects.access import READ_ONLY, ProjectAPIView
from projects.models import Project
from sessions_app import selectors
from sessions_app.models import Session
from sessions_app.serializers import (
    ROW_COLUMNS,
    ErrorSerializer,
    session_representation,
)
from sessions_app.throttles import QueryThrottle, WriteThrottle

# Errors every endpoint may return are added to the schema by config.schema; these are ingest's own.
INGEST_ERRORS = {
    code: OpenApiResponse(ErrorSerializer, description=text)
    for code, text in {
        409: "another upload already holds this commit's checkpoint (error.url points at it)",
        413: "over the size limit (error.limit)",
        415: "not multipart/form-data",
        503: "object storage unavailable, or processing too far behind (`overloaded`); Retry-After says when "
        "to try again; nothing was stored",
    }.items()
}


def keyset_page(name: str, item: serializers.Serializer) -> serializers.Serializer:
    return inline_serializer(
        name,
        {
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": item,
        },
    )


def offset_page(name: str, item: serializers.Serializer) -> serializers.Serializer:
    return inline_serializer(
        name,
        {
            "count": serializers.IntegerField(),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": item,
        },
    )


def result_list(name: str, item: serializers.Serializer) -> serializers.Serializer:
    return inline_serializer(name, {"results": item})


class KeysetPagination(CursorPagination):
    """Keyset pages of ``model`` in ``ordering``: no OFFSET past the cursor's position, no COUNT."""

    model: type[Model] = Session
    page_size = 50
    page_size_query_param = "limit"
    max_page_size = 200

    def decode_cursor(self, request: Request) -> Cursor | None:
        """A cursor is opaque but travels through the client: one that does not decode, or whose
        position is not a value of the ordering column (``cD0y`` is ``p=2``), is a 400, not a 500."""
        try:
            cursor = super().decode_cursor(request)
            if cursor and cursor.position is not None:
                self.ordering_field().to_python(cursor.position)
        except (NotFound, DjangoValidationError):
            raise serializers.ValidationError({"cursor": "This cursor is not valid; start again without it."}) from None
        return cursor

    def ordering_field(self) -> Field:
        ordering = (self.ordering,) if isinstance(self.ordering, str) else self.ordering
        return cast(Field, self.model._meta.get_field(ordering[0].lstrip("-")))


class SessionCursorPagination(KeysetPagination):
    ordering = ("-captured_at", "-id")  # the session's date (docs/scaling.md "Dates")


class OffsetPagination(LimitOffsetPagination):
    default_limit = 200
    max_limit = 1000


def session_list_items(sessions: QuerySet[Session], project: Project, limit: int = 200) -> list[dict[str, Any]]:
    """Up to ``limit`` sessions as list items: only the list's columns are read (docs/api.md)."""
    rows = sessions.values(*ROW_COLUMNS)[:limit]
    return [session_representation(row, project.slug) for row in rows]


class SessionObjectView(ProjectAPIView):
    required_roles = READ_ONLY
    throttle_classes = [QueryThrottle, WriteThrottle]

    def get_session(self, session_id: object) -> Session:
        session = selectors.session_get(project=self.project, session_id=session_id)
        if session is None:
            raise Http404
        return session

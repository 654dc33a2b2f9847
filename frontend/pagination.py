"""The pages' keyset pagination: the API's (``sessions_app.api.common.KeysetPagination``), one query per page.

Its cursors carry their direction, so both "older" and "newer" links are keyset queries — no OFFSET
past the position, no COUNT, stable while new rows arrive. A page differs from the API in two ways
only: it needs the cursors rather than whole links (its templates build the links, keeping the
filters), and a cursor that does not decode means the first page rather than a 400.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from django.db.models import QuerySet
from django.http import HttpRequest
from rest_framework import serializers
from rest_framework.pagination import Cursor
from rest_framework.request import Request

from sessions_app.api.common import KeysetPagination, SessionCursorPagination
from sessions_app.models import AccessLog


@dataclass
class KeysetPage:
    items: list[Any]
    older: str | None  # cursor of the next (older) page
    newer: str | None  # cursor of the previous (newer) page


class PageKeysetPagination(KeysetPagination):
    def decode_cursor(self, request: Request) -> Cursor | None:
        try:
            return super().decode_cursor(request)
        except serializers.ValidationError:
            return None  # a tampered or outdated cursor: the newest page


class SessionListPagination(PageKeysetPagination):
    ordering = SessionCursorPagination.ordering


class AccessLogPagination(PageKeysetPagination):
    model = AccessLog
    ordering = ("-at", "-id")  # the accesslog_project_recent index


def keyset_page(pagination: KeysetPagination, queryset: QuerySet, request: HttpRequest) -> KeysetPage:
    """The page of ``queryset`` that the request's ``cursor`` (and ``limit``) ask for."""
    items = pagination.paginate_queryset(queryset, Request(request)) or []
    return KeysetPage(items, _cursor(pagination.get_next_link()), _cursor(pagination.get_previous_link()))


def _cursor(link: str | None) -> str | None:
    return parse_qs(urlsplit(link).query).get(KeysetPagination.cursor_query_param, [None])[0] if link else None

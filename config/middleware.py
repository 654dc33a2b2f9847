"""Requests that must not become a 500: a database that is down, and unreadable input.

A database that is down (restarting, failing over) is a 503 with Retry-After: clients treat 503
as "try again later" and keep their queued segments; a 500 would read as a bug.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from urllib.parse import unquote_to_bytes

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.utils.html import escape

logger = logging.getLogger(__name__)
RETRY_AFTER_SECONDS = 5
SCIM_ERROR = "urn:ietf:params:scim:api:messages:2.0:Error"


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        logger.warning("database unavailable for %s: %s", request.path, exception)
        response = JsonResponse(
            {
                "error": {
                    "code": "database_unavailable",
                    "field": None,
                    "message": "The database is unavailable; retry shortly.",
                }
            },
            status=503,
        )
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response


class UnreadableRequestMiddleware:
    """A NUL or bytes that are not UTF-8 in the path, the query string or a header: 400 before any view.

    PostgreSQL refuses NUL in text, so such a value reaching a lookup (``?repo=``, a task id in
    the path, the user agent written to the access log) was a 500 from whichever view met it
    first. Refusing it here covers every route, present and future (docs/security.md).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        problem = unreadable_part(request)
        if problem is None:
            return self.get_response(request)
        message = f"The request's {problem} is not valid text (a NUL character, or bytes that are not UTF-8)."
        if request.path_info.startswith("/api/"):
            return JsonResponse({"error": {"code": "invalid", "field": problem, "message": message}}, status=400)
        if request.path_info.startswith("/scim/"):  # an identity provider reads RFC 7644's error shape
            return JsonResponse(
                {"schemas": [SCIM_ERROR], "status": "400", "scimType": "invalidSyntax", "detail": message},
                status=400,
                content_type="application/scim+json",
            )
        return HttpResponseBadRequest(
            f"<!doctype html><title>Bad request</title><h1>Bad request</h1><p>{escape(message)}"
        )


def unreadable_part(request: HttpRequest) -> str | None:
    """Which part of the request holds a NUL or invalid UTF-8, if any (WSGI strings are latin-1)."""
    if not _readable(request.META.get("PATH_INFO", "").encode("latin-1", "replace")):
        return "path"
    if not _readable(unquote_to_bytes(request.META.get("QUERY_STRING", "").replace("+", " "))):
        return "query"
    for key, value in request.META.items():
        if key.startswith("HTTP_") and isinstance(value, str) and "\x00" in value:
            return "header " + key[5:].replace("_", "-").title()
    return None


def _readable(raw: bytes) -> bool:
    if b"\x00" in raw:
        return False
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True

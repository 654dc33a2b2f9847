"""A dependency's failure outside the API's exception handler (pages, the export download): a storage
outage is a 503 page with Retry-After, a blob the bucket no longer has a 404 — JSON under ``/api/``,
HTML elsewhere — instead of Django's HTML 500 (docs/api.md "Errors")."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from projects.errors import Missing, Unavailable, json_error_response

logger = logging.getLogger(__name__)


class DependencyErrorMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, Unavailable):
            logger.warning("%s for %s: %s", exception.code, request.path, exception)
            response = _answer(request, 503, exception.code, exception.public_message, "frontend/503.html")
            response["Retry-After"] = str(exception.retry_after)
            return response
        if isinstance(exception, Missing):
            logger.error("%s for %s: %s", exception.code, request.path, exception)
            return _answer(request, 404, exception.code, exception.public_message, "frontend/404.html")
        return None


def _answer(request: HttpRequest, status: int, code: str, message: str, template: str) -> HttpResponse:
    if request.path.startswith("/api/"):
        return json_error_response(status, code, message)
    return render(request, template, {"message": message}, status=status)

"""A database that is down (restarting, failing over) is a 503 with Retry-After, not a 500.

Clients treat 503 as "try again later" and keep their queued segments; a 500 would read as a bug.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse

logger = logging.getLogger(__name__)
RETRY_AFTER_SECONDS = 5


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

"""One JSON error shape for every API refusal: ``{"error": {"code", "message", "field"}}``."""

from __future__ import annotations

import logging
from typing import Any

from django.http import Http404, JsonResponse
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

logger = logging.getLogger(__name__)


class ApiError(exceptions.APIException):
    """An error with an explicit status, machine code and optional field."""

    def __init__(
        self,
        status_code: int,
        code: str,
        message: str,
        *,
        field: str | None = None,
        retry_after: int | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(detail=message, code=code)
        self.status_code = status_code
        self.field = field
        self.retry_after = retry_after
        self.extra = extra or {}


class Unavailable(Exception):
    """A dependency is down: the API answers 503 with Retry-After and this code (docs/api.md "Errors").
    ``str(exc)`` (hosts, keys) goes to the log only; the client gets ``public_message``."""

    code = "unavailable"
    public_message = "A service this request needs is unavailable; retry later."
    retry_after = 30


class Missing(Exception):
    """Something a request needs is gone although its record exists (a blob the bucket no longer has):
    404 with this code, the details in the log (docs/api.md "Errors")."""

    code = "not_found"
    public_message = "Not found."


def encodable(text: str) -> str:
    """``text`` as UTF-8 can write it: a lone surrogate a message echoes from the request becomes ``?``
    (else the response could not be encoded, and a 400 became a 500)."""
    return text.encode("utf-8", "replace").decode("utf-8")


def error_body(code: str, message: str, field: str | None = None, **extra: Any) -> dict[str, Any]:
    field = encodable(field) if field is not None else None
    return {"error": {"code": encodable(code), "message": encodable(message), "field": field, **extra}}


def _first_validation_error(detail: Any, path: str | None = None) -> tuple[str | None, str, str]:
    """Walk a DRF ValidationError detail to its first leaf: (field, message, code)."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = None if key == "non_field_errors" else (f"{path}.{key}" if path else str(key))
            return _first_validation_error(value, name)
    if isinstance(detail, list) and detail:
        return _first_validation_error(detail[0], path)
    return path, str(detail), getattr(detail, "code", "invalid") or "invalid"


def _all_validation_errors(detail: Any, path: str | None = None) -> list[dict[str, str | None]]:
    """Every leaf of a DRF ValidationError detail, in order: [{field, code, message}]."""
    if isinstance(detail, dict):
        found = []
        for key, value in detail.items():
            name = path if key == "non_field_errors" else (f"{path}.{key}" if path else str(key))
            found += _all_validation_errors(value, name)
        return found
    if isinstance(detail, list):
        return [error for index, item in enumerate(detail) for error in _all_validation_errors(item, path)]
    return [
        {
            "field": encodable(path) if path else None,
            "code": getattr(detail, "code", "invalid") or "invalid",
            "message": encodable(str(detail)),
        }
    ]


def _describe(exc: exceptions.APIException) -> tuple[str, str, str | None]:
    if isinstance(exc, ApiError):
        return str(exc.get_codes()), str(exc.detail), exc.field
    if isinstance(exc, exceptions.ValidationError):
        field, message, code = _first_validation_error(exc.detail)
        return code, message, field
    codes = exc.get_codes()
    return (codes if isinstance(codes, str) else exc.default_code), str(exc.detail), None


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, Http404):
        exc = exceptions.NotFound("Not found.")
    elif isinstance(exc, Unavailable):
        logger.warning("%s: %s", exc.code, exc)
        exc = ApiError(503, exc.code, exc.public_message, retry_after=exc.retry_after)
    elif isinstance(exc, Missing):
        logger.error("%s: %s", exc.code, exc)
        exc = ApiError(404, exc.code, exc.public_message)
    elif isinstance(exc, DomainError):
        exc = exc.as_api_error()
    response = drf_exception_handler(exc, context)
    if response is None or not isinstance(exc, exceptions.APIException):
        return response
    code, message, field = _describe(exc)
    extra = exc.extra if isinstance(exc, ApiError) else {}
    if isinstance(exc, exceptions.ValidationError):  # the first above, every one here (docs/api.md "Errors")
        extra = {"errors": _all_validation_errors(exc.detail)}
    response.data = error_body(code, message, field, **extra)
    if isinstance(exc, ApiError) and exc.retry_after is not None:
        response["Retry-After"] = str(exc.retry_after)
    return response


def json_error_response(status_code: int, code: str, message: str) -> JsonResponse:
    return JsonResponse(error_body(code, message), status=status_code)


class DomainError(Exception):
    """A refusal from a service (a rule of the domain), mapped to a JSON error by the API."""

    status_code = 400

    def __init__(
        self,
        code: str,
        message: str,
        *,
        field: str | None = None,
        status_code: int | None = None,
        retry_after: int | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field
        self.retry_after = retry_after
        self.extra = extra or {}
        if status_code is not None:
            self.status_code = status_code

    @classmethod
    def too_large(cls, message: str, *, limit: int, field: str | None = None) -> DomainError:
        """A 413 naming the limit the client must stay under (``extra.limit``)."""
        return cls("too_large", message, field=field, status_code=413, extra={"limit": limit})

    def as_api_error(self) -> ApiError:
        return ApiError(
            self.status_code, self.code, self.message, field=self.field, retry_after=self.retry_after, extra=self.extra
        )

"""What every SCIM endpoint shares: the media types, RFC 7644 §3.12 errors, the bearer token, paging
and ``attributes``/``excludedAttributes``."""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.http import HttpRequest
from rest_framework import exceptions
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.parsers import BoundedJSONParser
from governance.scim_tokens import scim_token_valid
from projects.auth import bearer_secret
from projects.errors import DomainError
from sessions_app.validation import CONTROL, MAX_DB_INT, SURROGATE

LIST_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error"
PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
MAX_COUNT = 200
MAX_BODY = 64 * 1024  # a User or a PatchOp is a few hundred bytes; Entra's largest PATCH a few KB
_INTEGER = re.compile(r"\s*-?[0-9]{1,19}\s*")  # ASCII digits only: int() also reads "²" and "١"
_ATTRIBUTE = re.compile(r"[A-Za-z][A-Za-z0-9_.:$-]{0,200}")


class ScimError(exceptions.APIException):
    def __init__(self, status_code: int, detail: str, scim_type: str = "") -> None:
        super().__init__(detail)
        self.status_code = status_code
        self.scim_type = scim_type


class ScimParser(BoundedJSONParser):
    """Both JSON media types, bounded like the API's (config/parsers.py) and in size: DRF reads the
    body straight from the request, past Django's DATA_UPLOAD_MAX_MEMORY_SIZE."""

    media_type = "application/scim+json"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        body = stream.read(MAX_BODY + 1)
        if len(body) > MAX_BODY:
            raise ScimError(413, f"A SCIM request body is at most {MAX_BODY} bytes.")
        return super().parse(io.BytesIO(body), media_type, parser_context)


class PlainJsonParser(ScimParser):
    media_type = "application/json"


class ScimRenderer(JSONRenderer):
    media_type = "application/scim+json"


def error_response(status_code: int, detail: str, scim_type: str = "") -> Response:
    body: dict[str, Any] = {"schemas": [ERROR_SCHEMA], "status": str(status_code), "detail": detail}
    if scim_type:
        body["scimType"] = scim_type
    return Response(body, status=status_code)


class ScimView(APIView):
    authentication_classes: list[type] = []
    permission_classes: list[type] = []
    parser_classes = [ScimParser, PlainJsonParser]
    renderer_classes = [ScimRenderer, JSONRenderer]
    schema = None  # not part of the /api/v1 schema

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        if not scim_token_valid(bearer_secret(request)):
            raise ScimError(401, "A valid SCIM bearer token is required.")

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, ScimError):
            return error_response(exc.status_code, str(exc.detail), exc.scim_type)
        if isinstance(exc, DomainError):
            return error_response(exc.status_code, exc.message, "uniqueness" if exc.status_code == 409 else "")
        if isinstance(exc, exceptions.ParseError):
            return error_response(exc.status_code, str(exc.detail), "invalidSyntax")
        if isinstance(exc, exceptions.APIException):
            return error_response(exc.status_code, str(exc.detail))
        raise exc

    def body(self, request: Request) -> dict[str, Any]:
        if not isinstance(request.data, dict):
            raise ScimError(400, "The body must be a JSON object.", "invalidSyntax")
        return request.data


def text(value: Any, field: str, max_length: int) -> str:
    """A string PostgreSQL can store and a page can show: no control character, within the column."""
    if not isinstance(value, str):
        raise ScimError(400, f"{field} must be a string.", "invalidValue")
    if CONTROL.search(value) or SURROGATE.search(value):
        raise ScimError(400, f"{field} must not contain control characters.", "invalidValue")
    if len(value) > max_length:
        raise ScimError(400, f"{field} is at most {max_length} characters.", "invalidValue")
    return value


def optional_text(value: Any, field: str, max_length: int) -> str | None:
    """``null`` or an empty string clears the attribute (Entra's ``remove``, Okta's ``""``)."""
    if value is None or value == "":
        return None
    return text(value, field, max_length)


def as_bool(value: Any, field: str = "active") -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"  # Entra ID sends "False"
    raise ScimError(400, f"{field} must be true or false.", "invalidValue")


def integer(request: Request, name: str, default: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if not _INTEGER.fullmatch(raw) or abs(value := int(raw)) > MAX_DB_INT:
        raise ScimError(400, f"{name} must be an integer of at most 19 digits.", "invalidValue")
    return value


def attribute_names(request: Request, name: str) -> set[str]:
    """``attributes=userName,emails.value`` as lower-cased names (RFC 7644 §3.4.2.5: case-insensitive);
    a schema URN prefix is dropped."""
    raw = request.query_params.get(name)
    if not raw:
        return set()
    names = set()
    for part in raw.split(","):
        part = part.strip()
        if not _ATTRIBUTE.fullmatch(part):
            raise ScimError(400, f"{name} must be a comma-separated list of attribute names.", "invalidValue")
        names.add(part.rpartition(":")[2].lower() if part.lower().startswith("urn:") else part.lower())
    return names


ALWAYS = frozenset({"id", "schemas", "meta"})  # returned: always (RFC 7643 §2.4, §3.1)


def project(resource: dict[str, Any], request: Request, never_default: Iterable[str] = ()) -> dict[str, Any]:
    """Apply ``attributes`` / ``excludedAttributes`` to one resource (sub-attributes one level deep);
    ``never_default`` are the attributes returned only when asked for (``members`` of a group list)."""
    wanted, excluded = attribute_names(request, "attributes"), attribute_names(request, "excludedAttributes")
    if not wanted:
        excluded = excluded | {name.lower() for name in never_default}
    out: dict[str, Any] = {}
    for key, value in resource.items():
        lower = key.lower()
        if lower in ALWAYS:
            out[key] = value
        elif wanted:
            subs = {name.partition(".")[2] for name in wanted if name.startswith(lower + ".")}
            if lower in wanted:
                out[key] = value
            elif subs:
                out[key] = _subset(value, subs)
        elif lower not in excluded:
            out[key] = value
    return out


def _subset(value: Any, subs: set[str]) -> Any:
    if isinstance(value, dict):
        return {key: item for key, item in value.items() if key.lower() in subs}
    if isinstance(value, list):
        return [_subset(item, subs) for item in value]
    return value


def list_response(
    request: Request, rows: QuerySet[Any], render: Callable[[Any], dict[str, Any]], never_default: Iterable[str] = ()
) -> Response:
    """One page of ``rows`` (RFC 7644 §3.4.2.4: startIndex below 1 means 1, a negative count 0)."""
    start = max(1, integer(request, "startIndex", 1))
    count = min(MAX_COUNT, max(0, integer(request, "count", MAX_COUNT)))
    total = rows.count()
    page = list(rows[start - 1 : start - 1 + count]) if start <= total else []  # no OFFSET past the end
    return Response(
        {
            "schemas": [LIST_SCHEMA],
            "totalResults": total,
            "startIndex": start,
            "itemsPerPage": len(page),
            "Resources": [project(render(row), request, never_default) for row in page],
        }
    )


def location(kind: str, key: object) -> str:
    return f"{settings.SITE_URL}/scim/v2/{kind}/{key}"


class ScimNotFoundView(ScimView):
    """Any other path under /scim/v2/: a SCIM 404 after the token check."""

    def http_method_not_allowed(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Response:
        raise ScimError(404, "Nothing is served at this SCIM path.")

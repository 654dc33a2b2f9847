"""SCIM 2.0 (RFC 7643/7644) ``/scim/v2/Users``, so an identity provider (Okta, Entra ID) provisions
and deprovisions people (docs/security.md "Offboarding").

A small DRF view set rather than django-scim2: that library wants its own app, middleware and
settings block, and authenticates through a Django user, while here the caller is the identity
provider holding one bearer token per deployment (``SESSIONLEDGER_SCIM_TOKEN``, compared in constant
time; unset = SCIM off, every request 401). Only what the providers use is implemented: create, get,
list with ``filter=userName eq "…"``, PUT/PATCH of ``active`` and the name, DELETE. ``active: false``
and DELETE both go through ``offboarding.user_deactivate``; DELETE then removes the account (its
sessions stay the project's, with no author).
"""

from __future__ import annotations

import hmac
import io
import re
from dataclasses import asdict
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.http import HttpRequest
from rest_framework import exceptions, status
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.parsers import BoundedJSONParser
from governance.offboarding import user_deactivate, user_reactivate
from projects import audit_trail
from projects.auth import bearer_secret
from projects.errors import DomainError
from projects.models import User
from projects.services import user_create
from sessions_app.validation import CONTROL, MAX_DB_INT, MAX_USER_ID_DIGITS, SURROGATE

USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User"
LIST_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error"
PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
MAX_COUNT = 200
MAX_BODY = 64 * 1024  # a User or a PatchOp is a few hundred bytes; Entra's largest PATCH a few KB
EMAIL_MAX = User._meta.get_field("email").max_length or 254
NAME_MAX = User._meta.get_field("name").max_length or 150
# userName eq "a@b.c": fixed tokens and one class without backtracking
_FILTER = re.compile(r'\s*userName\s+eq\s+"([^"]{1,254})"\s*', re.IGNORECASE)
_INTEGER = re.compile(r"\s*-?[0-9]{1,19}\s*")  # ASCII digits only: int() also reads "²" and "١"


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


class ScimError(exceptions.APIException):
    def __init__(self, status_code: int, detail: str, scim_type: str = "") -> None:
        super().__init__(detail)
        self.status_code = status_code
        self.scim_type = scim_type


def _error(status_code: int, detail: str, scim_type: str = "") -> Response:
    body: dict[str, Any] = {"schemas": [ERROR_SCHEMA], "status": str(status_code), "detail": detail}
    if scim_type:
        body["scimType"] = scim_type
    return Response(body, status=status_code)


def _token_ok(request: Request) -> bool:
    expected = settings.SESSIONLEDGER_SCIM_TOKEN
    given = bearer_secret(request)
    return bool(expected) and given is not None and hmac.compare_digest(given.encode(), expected.encode())


class ScimView(APIView):
    authentication_classes: list[type] = []
    permission_classes: list[type] = []
    parser_classes = [ScimParser, PlainJsonParser]
    renderer_classes = [ScimRenderer, JSONRenderer]
    schema = None  # not part of the /api/v1 schema

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        if not _token_ok(request):
            raise ScimError(401, "A valid SCIM bearer token is required.")

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, ScimError):
            return _error(exc.status_code, str(exc.detail), exc.scim_type)
        if isinstance(exc, DomainError):
            return _error(exc.status_code, exc.message, "uniqueness" if exc.status_code == 409 else "")
        if isinstance(exc, exceptions.ParseError):
            return _error(exc.status_code, str(exc.detail), "invalidSyntax")
        if isinstance(exc, exceptions.APIException):
            return _error(exc.status_code, str(exc.detail))
        raise exc

    def user_or_404(self, user_id: str) -> User:
        numeric = user_id.isascii() and user_id.isdigit() and len(user_id) <= MAX_USER_ID_DIGITS
        user = User.objects.filter(pk=int(user_id)).first() if numeric else None
        if user is None:
            raise ScimError(404, "No such user.")  # the id is not echoed: it may hold anything
        return user

    def body(self, request: Request) -> dict[str, Any]:
        if not isinstance(request.data, dict):
            raise ScimError(400, "The body must be a JSON object.", "invalidSyntax")
        return request.data


def user_resource(user: User) -> dict[str, Any]:
    return {
        "schemas": [USER_SCHEMA],
        "id": str(user.pk),
        "userName": user.email,
        "displayName": user.name,
        "name": {"formatted": user.name},
        "emails": [{"value": user.email, "primary": True}],
        "active": user.is_active,
        "meta": {
            "resourceType": "User",
            "created": user.date_joined.isoformat(),
            "location": f"{settings.SITE_URL}/scim/v2/Users/{user.pk}",
        },
    }


def _as_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"  # Entra ID sends "False"
    raise ScimError(400, "active must be true or false.", "invalidValue")


def _text(value: Any, field: str, max_length: int) -> str:
    """A string PostgreSQL can store and a page can show: no control character, within the column."""
    if not isinstance(value, str):
        raise ScimError(400, f"{field} must be a string.", "invalidValue")
    if CONTROL.search(value) or SURROGATE.search(value):
        raise ScimError(400, f"{field} must not contain control characters.", "invalidValue")
    if len(value) > max_length:
        raise ScimError(400, f"{field} is at most {max_length} characters.", "invalidValue")
    return value


def _user_name(value: Any) -> str:
    email = _text(value, "userName", EMAIL_MAX).strip().lower()
    try:
        validate_email(email)
    except ValidationError:
        raise ScimError(400, "userName must be the person's e-mail address.", "invalidValue") from None
    return email


def _display_name(data: dict[str, Any]) -> str | None:
    if data.get("displayName") is not None:
        return _text(data["displayName"], "displayName", NAME_MAX)
    name = data.get("name")
    if name is None:
        return None
    if not isinstance(name, dict):
        raise ScimError(400, "name must be an object.", "invalidValue")
    parts = {key: _text(name[key], f"name.{key}", NAME_MAX) for key in name if key in _NAME_PARTS and name[key]}
    given = " ".join(parts[key] for key in ("givenName", "familyName") if key in parts)
    return _text(parts.get("formatted") or given, "name", NAME_MAX)


_NAME_PARTS = ("formatted", "givenName", "familyName")


def _integer(request: Request, name: str, default: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if not _INTEGER.fullmatch(raw) or abs(value := int(raw)) > MAX_DB_INT:
        raise ScimError(400, f"{name} must be an integer of at most 19 digits.", "invalidValue")
    return value


def _user_filter(raw: str) -> str:
    match = _FILTER.fullmatch(raw)
    if match is None or CONTROL.search(match.group(1)):
        raise ScimError(400, 'Only filter=userName eq "…" is supported.', "invalidFilter")
    return match.group(1)


@transaction.atomic
def _apply(user: User, *, active: bool | None, name: str | None, request: Request) -> None:
    if name is not None and name != user.name:
        user.name = name
        user.save(update_fields=["name"])
    if active is False and user.is_active:
        user_deactivate(user=user)  # records user.deactivated (via scim: the request being served)
    elif active is True and not user.is_active:
        user_reactivate(user=user)
        audit_trail.record(request, kind="user.reactivated", target=user.email, via="scim")


class ScimUsersView(ScimView):
    def get(self, request: Request) -> Response:
        users = User.objects.order_by("pk")
        if raw := request.query_params.get("filter"):
            users = users.filter(email__iexact=_user_filter(raw))
        start = max(1, _integer(request, "startIndex", 1))  # RFC 7644 3.4.2.4: below 1 means 1
        count = min(MAX_COUNT, max(0, _integer(request, "count", MAX_COUNT)))
        total = users.count()
        page = list(users[start - 1 : start - 1 + count]) if start <= total else []  # no OFFSET past the end
        return Response(
            {
                "schemas": [LIST_SCHEMA],
                "totalResults": total,
                "startIndex": start,
                "itemsPerPage": len(page),
                "Resources": [user_resource(user) for user in page],
            }
        )

    def post(self, request: Request) -> Response:
        data = self.body(request)
        email = _user_name(data.get("userName"))
        active, name = _as_bool(data.get("active", True)), _display_name(data)
        with transaction.atomic():
            user = user_create(email=email)
            audit_trail.record(request, kind="user.provisioned", target=user.email, via="scim")
            _apply(user, active=active, name=name, request=request)
        return Response(user_resource(user), status=status.HTTP_201_CREATED)


class ScimUserView(ScimView):
    def get(self, request: Request, user_id: str) -> Response:
        return Response(user_resource(self.user_or_404(user_id)))

    def put(self, request: Request, user_id: str) -> Response:
        user = self.user_or_404(user_id)
        data = self.body(request)
        active = _as_bool(data["active"]) if "active" in data else None
        _apply(user, active=active, name=_display_name(data), request=request)
        return Response(user_resource(user))

    def patch(self, request: Request, user_id: str) -> Response:
        user = self.user_or_404(user_id)
        operations = self.body(request).get("Operations")
        if not isinstance(operations, list):
            raise ScimError(400, "A PatchOp needs Operations.", "invalidSyntax")
        changes: dict[str, Any] = {}
        for operation in operations:
            changes.update(_patch_changes(operation))
        active = _as_bool(changes["active"]) if "active" in changes else None
        name = next((_text(changes[key], key, NAME_MAX) for key in _PATCH_NAMES if key in changes), None)
        _apply(user, active=active, name=name, request=request)
        return Response(user_resource(user))

    def delete(self, request: Request, user_id: str) -> Response:
        user = self.user_or_404(user_id)
        with transaction.atomic():
            # One event, itemised as user.deactivated is: what the delete ended (nothing more for a
            # user deactivated earlier), then the account.
            detail = asdict(user_deactivate(user=user, audit=False))
            audit_trail.record(request, kind="user.deleted", target=user.email, via="scim", detail=detail)
            user.delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


_PATCH_NAMES = ("displayName", "name.formatted")


def _patch_changes(operation: Any) -> dict[str, Any]:
    """One ``replace``/``add`` operation as attribute → value; attributes we do not keep are ignored
    (Entra sends emails, externalId, …), the ones we keep are checked by the caller."""
    op = operation.get("op") if isinstance(operation, dict) else None
    if not isinstance(op, str) or op.lower() not in ("replace", "add"):
        raise ScimError(400, "Only replace and add operations are supported.", "invalidSyntax")
    path, value = operation.get("path"), operation.get("value")
    if path is None:
        if not isinstance(value, dict):
            raise ScimError(400, "An operation without a path needs an object value.", "invalidValue")
        return dict(value)
    if not isinstance(path, str):
        raise ScimError(400, "path must be a string.", "invalidPath")
    return {path: value}


class ServiceProviderConfigView(ScimView):
    def get(self, request: Request) -> Response:
        return Response(
            {
                "schemas": ["urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"],
                "patch": {"supported": True},
                "bulk": {"supported": False, "maxOperations": 0, "maxPayloadSize": 0},
                "filter": {"supported": True, "maxResults": MAX_COUNT},
                "changePassword": {"supported": False},
                "sort": {"supported": False},
                "etag": {"supported": False},
                "authenticationSchemes": [
                    {"type": "oauthbearertoken", "name": "Bearer token", "description": "SESSIONLEDGER_SCIM_TOKEN"}
                ],
            }
        )


class ScimNotFoundView(ScimView):
    """Any other path under /scim/v2/ (Groups, Schemas, …): a SCIM 404 after the token check."""

    def http_method_not_allowed(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Response:
        raise ScimError(404, "Only Users and ServiceProviderConfig are served here.")

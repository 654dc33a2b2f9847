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
import re
from typing import Any

from django.conf import settings
from django.db import transaction
from rest_framework import exceptions, status
from rest_framework.parsers import JSONParser
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.parsers import BoundedJSONParser
from projects import audit_trail
from projects.auth import bearer_secret
from projects.errors import DomainError
from projects.models import User
from projects.services import user_create
from sessions_app.offboarding import user_deactivate, user_reactivate

USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User"
LIST_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error"
PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
MAX_COUNT = 200
# userName eq "a@b.c": fixed tokens and one class without backtracking
_FILTER = re.compile(r'\s*userName\s+eq\s+"([^"]{1,254})"\s*', re.IGNORECASE)


class ScimParser(BoundedJSONParser):
    media_type = "application/scim+json"


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
    parser_classes = [ScimParser, JSONParser]
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
        if isinstance(exc, exceptions.APIException):
            return _error(exc.status_code, str(exc.detail))
        raise exc

    def user_or_404(self, user_id: str) -> User:
        user = User.objects.filter(pk=int(user_id)).first() if user_id.isdigit() else None
        if user is None:
            raise ScimError(404, f"User {user_id} not found.")
        return user


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


def _display_name(data: dict[str, Any]) -> str | None:
    name = data.get("name")
    if isinstance(data.get("displayName"), str):
        return str(data["displayName"])[:150]
    if isinstance(name, dict):
        parts = [name.get("formatted")] if name.get("formatted") else [name.get("givenName"), name.get("familyName")]
        return " ".join(str(p) for p in parts if isinstance(p, str))[:150]
    return None


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
            match = _FILTER.fullmatch(raw)
            if match is None:
                raise ScimError(400, 'Only filter=userName eq "…" is supported.', "invalidFilter")
            users = users.filter(email__iexact=match.group(1))
        try:
            start = max(1, int(request.query_params.get("startIndex", 1)))
            count = min(MAX_COUNT, max(0, int(request.query_params.get("count", MAX_COUNT))))
        except ValueError:
            raise ScimError(400, "startIndex and count are integers.", "invalidValue") from None
        page = list(users[start - 1 : start - 1 + count])
        return Response(
            {
                "schemas": [LIST_SCHEMA],
                "totalResults": users.count(),
                "startIndex": start,
                "itemsPerPage": len(page),
                "Resources": [user_resource(user) for user in page],
            }
        )

    def post(self, request: Request) -> Response:
        data = request.data if isinstance(request.data, dict) else {}
        email = data.get("userName")
        if not isinstance(email, str) or "@" not in email:
            raise ScimError(400, "userName must be the person's e-mail address.", "invalidValue")
        with transaction.atomic():
            user = user_create(email=email.strip().lower())
            audit_trail.record(request, kind="user.provisioned", target=user.email, via="scim")
            _apply(user, active=_as_bool(data.get("active", True)), name=_display_name(data), request=request)
        return Response(user_resource(user), status=status.HTTP_201_CREATED)


class ScimUserView(ScimView):
    def get(self, request: Request, user_id: str) -> Response:
        return Response(user_resource(self.user_or_404(user_id)))

    def put(self, request: Request, user_id: str) -> Response:
        user = self.user_or_404(user_id)
        data = request.data if isinstance(request.data, dict) else {}
        active = _as_bool(data["active"]) if "active" in data else None
        _apply(user, active=active, name=_display_name(data), request=request)
        return Response(user_resource(user))

    def patch(self, request: Request, user_id: str) -> Response:
        user = self.user_or_404(user_id)
        operations = request.data.get("Operations") if isinstance(request.data, dict) else None
        if not isinstance(operations, list):
            raise ScimError(400, "A PatchOp needs Operations.", "invalidSyntax")
        active: bool | None = None
        name: str | None = None
        for operation in operations:
            if not isinstance(operation, dict) or str(operation.get("op", "")).lower() not in ("replace", "add"):
                raise ScimError(400, "Only replace and add operations are supported.", "invalidSyntax")
            path, value = operation.get("path"), operation.get("value")
            changes = value if path is None and isinstance(value, dict) else {str(path): value}
            for key, item in changes.items():
                if key == "active":
                    active = _as_bool(item)
                elif key in ("displayName", "name.formatted") and isinstance(item, str):
                    name = item[:150]
        _apply(user, active=active, name=name, request=request)
        return Response(user_resource(user))

    def delete(self, request: Request, user_id: str) -> Response:
        user = self.user_or_404(user_id)
        with transaction.atomic():
            user_deactivate(user=user)
            audit_trail.record(request, kind="user.deleted", target=user.email, via="scim")
            user.delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


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

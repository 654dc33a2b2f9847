"""``/scim/v2/Users``: create, read, list (filters, paging, ``attributes``), replace, patch, delete.

``userName`` need not be an address (an Entra UPN): the sign-in address is the primary of ``emails``,
else ``userName`` when it is one. A change of either is applied and the SSO identity follows: the
account's primary allauth ``EmailAddress`` becomes the new address (verified: the identity provider
vouches for it), its ``SocialAccount`` stays, so the next sign-in reaches the same account.
``active: false`` and DELETE go through ``offboarding.user_deactivate``; neither touches a
break-glass account (403, audited)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from allauth.account.models import EmailAddress
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.db.models import Q, QuerySet
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from governance.groups import memberships_sync
from governance.offboarding import user_deactivate, user_reactivate
from governance.scim.filters import Term, parse_filter
from governance.scim.patch import Operation, operations
from governance.scim.protocol import ScimError, ScimView, as_bool, list_response, location, optional_text, project, text
from projects import audit_trail
from projects.addresses import address_vouch
from projects.errors import DomainError
from projects.models import User
from projects.services import user_create
from sessions_app.validation import MAX_USER_ID_DIGITS

USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User"
EMAIL_MAX = User._meta.get_field("email").max_length or 254
NAME_MAX = User._meta.get_field("name").max_length or 150
EXTERNAL_ID_MAX = User._meta.get_field("external_id").max_length or 255
USER_FILTERS = frozenset({"username", "externalid", "id", "emails.value"})
_UNSET: Any = object()


@dataclass
class UserChanges:
    """What one request asks of a user, each field ``_UNSET`` when it does not say."""

    user_name: Any = _UNSET
    email: Any = _UNSET
    external_id: Any = _UNSET
    active: Any = _UNSET
    name: Any = _UNSET
    name_parts: dict[str, str | None] = field(default_factory=dict)  # givenName / familyName alone


def user_or_404(user_id: str) -> User:
    numeric = user_id.isascii() and user_id.isdigit() and len(user_id) <= MAX_USER_ID_DIGITS
    user = User.objects.filter(pk=int(user_id)).first() if numeric else None
    if user is None:
        raise ScimError(404, "No such user.")  # the id is not echoed: it may hold anything
    return user


def _split(name: str) -> tuple[str, str]:
    given, _, family = name.partition(" ")
    return given, family


def user_resource(user: User) -> dict[str, Any]:
    resource: dict[str, Any] = {
        "schemas": [USER_SCHEMA],
        "id": str(user.pk),
        "userName": user.scim_user_name or user.email,
        "emails": [{"value": user.email}],
        "active": user.is_active,
        "meta": {
            "resourceType": "User",
            "created": user.date_joined.isoformat(),
            "location": location("Users", user.pk),
        },
    }
    if user.external_id:
        resource["externalId"] = user.external_id
    if user.name:  # an unassigned attribute is left out (RFC 7643 §2.5)
        resource["displayName"] = user.name
        resource["name"] = {"formatted": user.name}
    return resource


def _address(value: Any, field: str) -> str:
    email = text(value, field, EMAIL_MAX).strip().lower()
    try:
        validate_email(email)
    except ValidationError:
        raise ScimError(400, f"{field} must be an e-mail address.", "invalidValue") from None
    return email


def _is_address(value: str) -> bool:
    try:
        validate_email(value)
    except ValidationError:
        return False
    return len(value) <= EMAIL_MAX


def _primary_email(value: Any) -> str:
    """The primary of a SCIM ``emails`` list (else the work one, else the first)."""
    if not isinstance(value, list) or not value or not all(isinstance(item, dict) for item in value):
        raise ScimError(400, "emails must be a list of objects with a value.", "invalidValue")
    chosen = next((item for item in value if item.get("primary") in (True, "true", "True")), None)
    chosen = chosen or next((item for item in value if item.get("type") == "work"), value[0])
    return _address(chosen.get("value"), "emails.value")


def _name_object(value: Any, changes: UserChanges) -> None:
    if value is None:
        changes.name = ""
        return
    if not isinstance(value, dict):
        raise ScimError(400, "name must be an object.", "invalidValue")
    parts = {key: optional_text(value.get(key), f"name.{key}", NAME_MAX) for key in _NAME_PARTS if key in value}
    if parts.get("formatted"):
        changes.name = text(parts["formatted"], "name", NAME_MAX)
    elif "givenName" in parts and "familyName" in parts:
        changes.name = text(" ".join(p for p in (parts["givenName"], parts["familyName"]) if p), "name", NAME_MAX)
    else:
        changes.name_parts.update({key: parts[key] for key in ("givenName", "familyName") if key in parts})


_NAME_PARTS = ("formatted", "givenName", "familyName")


def changes_from_resource(data: dict[str, Any], *, creating: bool) -> UserChanges:
    """A full User (POST, PUT)."""
    changes = UserChanges()
    if creating or "userName" in data:
        changes.user_name = text(data.get("userName"), "userName", EMAIL_MAX).strip()
        if not changes.user_name:
            raise ScimError(400, "userName is required.", "invalidValue")
    if data.get("emails") not in (None, []):
        changes.email = _primary_email(data["emails"])
    if "externalId" in data:
        changes.external_id = optional_text(data["externalId"], "externalId", EXTERNAL_ID_MAX)
    if "active" in data or creating:
        changes.active = as_bool(data.get("active", True))
    if "name" in data:
        _name_object(data["name"], changes)
    if data.get("displayName") is not None:
        changes.name = text(data["displayName"], "displayName", NAME_MAX)
    return changes


def changes_from_patch(ops: list[Operation]) -> UserChanges:
    changes = UserChanges()
    for op in ops:
        if op.op == "remove" and op.path in _REQUIRED:
            raise ScimError(400, _REQUIRED[op.path], "invalidSyntax" if op.path == "active" else "invalidValue")
        if op.op == "remove" and op.path in ("emails", "emails.value"):
            continue  # the sign-in address cannot be empty: the next replace sets it
        value = None if op.op == "remove" else op.value
        if op.path in ("name.givenname", "name.familyname"):
            key = "givenName" if op.path == "name.givenname" else "familyName"
            changes.name_parts[key] = optional_text(value, f"name.{key}", NAME_MAX)
        elif op.path == "emails.value" and op.selector not in (None, "work"):
            continue  # only the work address is kept
        elif setter := _PATCH_SETTERS.get(op.path):
            setter(changes, value)
        # anything else (title, phoneNumbers, the enterprise extension) is not kept here and is
        # ignored, as both providers expect
    return changes


_REQUIRED = {
    "active": "active cannot be removed: replace it with false.",
    "username": "userName is required.",
}


def _set(field: str, convert: Callable[[Any], Any]) -> Callable[[UserChanges, Any], None]:
    return lambda changes, value: setattr(changes, field, convert(value))


_PATCH_SETTERS: dict[str, Callable[[UserChanges, Any], None]] = {
    "active": _set("active", as_bool),
    "username": _set("user_name", lambda value: text(value, "userName", EMAIL_MAX).strip()),
    "externalid": _set("external_id", lambda value: optional_text(value, "externalId", EXTERNAL_ID_MAX)),
    "displayname": _set("name", lambda value: optional_text(value, "displayName", NAME_MAX) or ""),
    "name.formatted": _set("name", lambda value: optional_text(value, "name.formatted", NAME_MAX) or ""),
    "name": lambda changes, value: _name_object(value, changes),
    "emails": _set("email", lambda value: _primary_email(value if isinstance(value, list) else [value])),
    "emails.value": _set("email", lambda value: _address(value, "emails.value")),
}


def _taken(
    user: User | None, *, email: str | None = None, user_name: str | None = None, external_id: str | None = None
) -> None:
    others = User.objects.exclude(pk=user.pk) if user is not None else User.objects.all()
    if email is not None and others.filter(email__iexact=email).exists():
        raise ScimError(409, "Another user has this e-mail address.", "uniqueness")
    if user_name is not None and others.filter(_user_name_is(user_name)).exists():
        raise ScimError(409, "Another user has this userName.", "uniqueness")
    if external_id is not None and others.filter(external_id=external_id).exists():
        raise ScimError(409, "Another user has this externalId.", "uniqueness")


def _user_name_is(value: str) -> Q:
    return Q(scim_user_name__iexact=value) | Q(scim_user_name__isnull=True, email__iexact=value)


def _sign_in_address(user: User | None, changes: UserChanges) -> str | None:
    """The address the request makes the sign-in address, if it changes it."""
    if changes.email is not _UNSET:
        return str(changes.email)
    if changes.user_name is _UNSET or not _is_address(changes.user_name.lower()):
        if user is None:
            raise ScimError(400, "userName is not an e-mail address and no emails were given.", "invalidValue")
        return None
    follows = user is None or user.scim_user_name is None or user.scim_user_name.lower() == user.email
    return str(changes.user_name).lower() if follows else None


def refuse_break_glass(request: Request, user: User, action: str) -> None:
    """Outside the change's transaction, so the refusal's event stays."""
    if user.break_glass:
        audit_trail.record(
            request, kind="scim.refused", target=user.email, detail={"reason": "break_glass", "action": action}
        )
        raise ScimError(403, "This is a break-glass account: SCIM may not deactivate or delete it.")


def apply(request: Request, user: User, changes: UserChanges) -> list[str]:
    """Apply ``changes`` to ``user`` in the caller's transaction; returns the fields that changed."""
    email = _sign_in_address(user, changes)
    user_name = user.scim_user_name or user.email if changes.user_name is _UNSET else changes.user_name
    new_email = email or user.email
    stored_name = None if user_name.lower() == new_email else user_name
    external_id = user.external_id if changes.external_id is _UNSET else changes.external_id
    name = user.name if changes.name is _UNSET else changes.name
    if changes.name_parts:
        given, family = _split(name)
        given = changes.name_parts.get("givenName", given) or ""
        family = changes.name_parts.get("familyName", family) or ""
        name = text(" ".join(part for part in (given, family) if part), "name", NAME_MAX)
    _taken(
        user,
        email=new_email if new_email != user.email else None,
        user_name=user_name if user_name.lower() != (user.scim_user_name or user.email).lower() else None,
        external_id=external_id if external_id != user.external_id else None,
    )
    old_email = user.email
    updates = {"email": new_email, "scim_user_name": stored_name, "external_id": external_id, "name": name}
    changed = [key for key, value in updates.items() if getattr(user, key) != value]
    for key in changed:
        setattr(user, key, updates[key])
    if changed:
        user.save(update_fields=changed)
    if "email" in changed:
        # the SSO identity follows: the old address is no longer this person's, the new one is verified
        EmailAddress.objects.filter(user=user, email__iexact=old_email).delete()
        EmailAddress.objects.filter(user=user, primary=True).update(primary=False)
        address_vouch(user=user)
    if changed:
        detail = {"fields": changed} | ({"from": old_email} if "email" in changed else {})
        audit_trail.record(request, kind="user.updated", target=user.email, detail=detail)
    if changes.active is False and user.is_active:
        user_deactivate(user=user)  # records user.deactivated (via scim: the request being served)
        changed.append("active")
    elif changes.active is True and not user.is_active:
        user_reactivate(user=user)
        audit_trail.record(request, kind="user.reactivated", target=user.email, via="scim")
        memberships_sync([user])  # what their groups grant comes back with the account
        changed.append("active")
    return changed


def users_matching(terms: list[Term]) -> QuerySet[User]:
    users = User.objects.order_by("pk")
    for term in terms:
        if term.path == "username":
            users = users.filter(_user_name_is(term.value))
        elif term.path == "externalid":
            users = users.filter(external_id=term.value)  # caseExact (RFC 7643 §3.1)
        elif term.path == "id":
            numeric = term.value.isascii() and term.value.isdigit() and len(term.value) <= MAX_USER_ID_DIGITS
            users = users.filter(pk=int(term.value)) if numeric else users.none()
        elif term.email_type in (None, "work"):
            users = users.filter(email__iexact=term.value)
        else:
            users = users.none()  # only work addresses are kept
    return users


class ScimUsersView(ScimView):
    def get(self, request: Request) -> Response:
        raw = request.query_params.get("filter")
        terms = parse_filter(raw, USER_FILTERS) if raw else []
        return list_response(request, users_matching(terms), user_resource)

    def post(self, request: Request) -> Response:
        changes = changes_from_resource(self.body(request), creating=True)
        email = _sign_in_address(None, changes)
        assert email is not None  # a new user always gets one, or the request was refused
        _taken(None, user_name=changes.user_name, external_id=changes.external_id or None)
        with transaction.atomic():
            try:
                user = user_create(email=email)
            except DomainError:
                raise ScimError(409, "A user with this e-mail address already exists.", "uniqueness") from None
            audit_trail.record(request, kind="user.provisioned", target=user.email, via="scim")
            apply(request, user, changes)
        return Response(project(user_resource(user), request), status=status.HTTP_201_CREATED)


class ScimUserView(ScimView):
    def get(self, request: Request, user_id: str) -> Response:
        return Response(project(user_resource(user_or_404(user_id)), request))

    def put(self, request: Request, user_id: str) -> Response:
        user = user_or_404(user_id)
        changes = changes_from_resource(self.body(request), creating=False)
        if changes.active is False and user.is_active:
            refuse_break_glass(request, user, "deactivate")
        with transaction.atomic():
            apply(request, user, changes)
        return Response(project(user_resource(user), request))

    def patch(self, request: Request, user_id: str) -> Response:
        user = user_or_404(user_id)
        changes = changes_from_patch(operations(self.body(request)))
        if changes.active is False and user.is_active:
            refuse_break_glass(request, user, "deactivate")
        with transaction.atomic():
            apply(request, user, changes)
        return Response(project(user_resource(user), request))

    def delete(self, request: Request, user_id: str) -> Response:
        user = user_or_404(user_id)
        refuse_break_glass(request, user, "delete")
        with transaction.atomic():
            # One event, itemised as user.deactivated is: what the delete ended (nothing more for a
            # user deactivated earlier), then the account.
            detail = asdict(user_deactivate(user=user, audit=False))
            audit_trail.record(request, kind="user.deleted", target=user.email, via="scim", detail=detail)
            user.delete()
        return Response(status=status.HTTP_204_NO_CONTENT)

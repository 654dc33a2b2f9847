"""``/scim/v2/Groups``: the identity provider's groups and their members (``value`` = a user's id).

A group grants nothing by itself; a staff-set ``GroupMapping`` makes its members members of a
project (``governance.groups``). Every change of members, names or the group itself re-syncs the
memberships of the people concerned at once, in the same transaction, and is audited."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from governance.groups import memberships_sync
from governance.models import ScimGroup
from governance.scim.filters import Term, parse_filter
from governance.scim.patch import Operation, operations
from governance.scim.protocol import ScimError, ScimView, list_response, location, optional_text, project, text
from projects import audit_trail
from projects.models import User
from sessions_app.validation import MAX_USER_ID_DIGITS

GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group"
GROUP_FILTERS = frozenset({"displayname", "externalid", "id"})
NAME_MAX = ScimGroup._meta.get_field("display_name").max_length or 255
MAX_MEMBERS = 1000  # within one request body (64 KB) anyway


def group_resource(group: ScimGroup) -> dict[str, Any]:
    members = sorted(group.members.all(), key=lambda user: user.pk)  # the list's prefetch: no query per group
    resource: dict[str, Any] = {
        "schemas": [GROUP_SCHEMA],
        "id": str(group.pk),
        "displayName": group.display_name,
        "members": [{"value": str(user.pk), "$ref": location("Users", user.pk)} for user in members],
        "meta": {
            "resourceType": "Group",
            "created": group.created_at.isoformat(),
            "location": location("Groups", group.pk),
        },
    }
    if group.external_id:
        resource["externalId"] = group.external_id
    return resource


def group_or_404(group_id: str) -> ScimGroup:
    try:
        key = uuid.UUID(group_id) if len(group_id) <= 36 else None
    except ValueError:
        key = None
    group = ScimGroup.objects.filter(pk=key).first() if key else None
    if group is None:
        raise ScimError(404, "No such group.")
    return group


def _member_ids(value: Any) -> set[int]:
    """``[{"value": "42"}, …]`` (or one such object) as user ids, each of an existing user."""
    items = value if isinstance(value, list) else [value]
    if len(items) > MAX_MEMBERS:
        raise ScimError(400, f"At most {MAX_MEMBERS} members per request.", "tooMany")
    ids: set[int] = set()
    for item in items:
        raw = item.get("value") if isinstance(item, dict) else None
        if not isinstance(raw, str) or not (raw.isascii() and raw.isdigit() and len(raw) <= MAX_USER_ID_DIGITS):
            raise ScimError(400, "Each member is an object whose value is a user's id.", "invalidValue")
        ids.add(int(raw))
    if len(ids) != User.objects.filter(pk__in=ids).count():
        raise ScimError(400, "A member is not a user here.", "invalidValue")
    return ids


def _name(value: Any) -> str:
    name = text(value, "displayName", NAME_MAX).strip()
    if not name:
        raise ScimError(400, "displayName is required.", "invalidValue")
    return name


def _members_change(request: Request, group: ScimGroup, add: set[int], remove: set[int]) -> set[int]:
    current = set(group.members.values_list("pk", flat=True))
    added, removed = add - current, (remove & current) - add
    group.members.add(*added)
    group.members.remove(*removed)
    emails = dict(User.objects.filter(pk__in=added | removed).values_list("pk", "email"))
    for pk in sorted(added):
        audit_trail.record(request, kind="group.member_added", target=emails[pk], detail={"group": group.display_name})
    for pk in sorted(removed):
        audit_trail.record(
            request, kind="group.member_removed", target=emails[pk], detail={"group": group.display_name}
        )
    return added | removed


def _save(request: Request, group: ScimGroup, *, name: str, external_id: str | None) -> bool:
    changed = (group.display_name, group.external_id) != (name, external_id)
    if changed:
        before = group.display_name
        group.display_name, group.external_id = name, external_id
        _unique(group)
        try:
            with transaction.atomic():
                group.save()
        except IntegrityError:  # saved by a concurrent push since the check
            raise ScimError(409, "Another group has this displayName or externalId.", "uniqueness") from None
        if before:
            audit_trail.record(request, kind="group.updated", target=group.display_name, detail={"from": before})
    return changed


def _unique(group: ScimGroup) -> None:
    others = ScimGroup.objects.exclude(pk=group.pk)
    if others.filter(display_name__iexact=group.display_name).exists():
        raise ScimError(409, "Another group has this displayName.", "uniqueness")
    if group.external_id and others.filter(external_id=group.external_id).exists():
        raise ScimError(409, "Another group has this externalId.", "uniqueness")


def _sync(user_ids: set[int]) -> None:
    memberships_sync(User.objects.filter(pk__in=user_ids).order_by("pk"))


def groups_matching(terms: list[Term]) -> QuerySet[ScimGroup]:
    groups = ScimGroup.objects.order_by("created_at", "pk")
    for term in terms:
        if term.path == "displayname":
            groups = groups.filter(display_name__iexact=term.value)
        elif term.path == "externalid":
            groups = groups.filter(external_id=term.value)
        else:
            try:
                groups = groups.filter(pk=uuid.UUID(term.value))
            except ValueError:
                groups = groups.none()
    return groups


@dataclass
class _Plan:
    """What a PatchOp asks of a group: its names, and the members to add, remove or set."""

    name: str
    external_id: str | None
    add: set[int] = field(default_factory=set)
    remove: set[int] = field(default_factory=set)
    replace: set[int] | None = None

    def members(self, op: Operation) -> None:
        if op.op == "remove":
            if op.selector is not None:  # members[value eq "42"]
                self.remove |= _member_ids({"value": op.selector})
            elif op.value is None:
                self.replace, self.add = set(), set()  # remove every member
            else:
                self.remove |= _member_ids(op.value)
            self.add -= self.remove
            return
        ids = _member_ids(op.value) if op.value not in (None, []) else set()
        if op.op == "replace":
            self.replace, self.add, self.remove = ids, set(), set()
        else:
            self.add |= ids
            self.remove -= ids


def _plan(group: ScimGroup, ops: list[Operation]) -> _Plan:
    plan = _Plan(name=group.display_name, external_id=group.external_id)
    for op in ops:
        if op.path == "displayname":
            if op.op == "remove":
                raise ScimError(400, "displayName is required.", "invalidValue")
            plan.name = _name(op.value)
        elif op.path == "externalid":
            plan.external_id = None if op.op == "remove" else optional_text(op.value, "externalId", NAME_MAX)
        elif op.path == "members":
            plan.members(op)
        elif op.path not in ("id", "meta", "schemas"):  # Okta echoes the id in a value object
            raise ScimError(400, "A group's displayName, externalId and members may be changed.", "invalidPath")
    return plan


class ScimGroupsView(ScimView):
    def get(self, request: Request) -> Response:
        raw = request.query_params.get("filter")
        terms = parse_filter(raw, GROUP_FILTERS) if raw else []
        return list_response(request, groups_matching(terms).prefetch_related("members"), group_resource)

    def post(self, request: Request) -> Response:
        data = self.body(request)
        name = _name(data.get("displayName"))
        external_id = optional_text(data.get("externalId"), "externalId", NAME_MAX)
        members = _member_ids(data["members"]) if data.get("members") else set()
        with transaction.atomic():
            group = ScimGroup(display_name="")
            _save(request, group, name=name, external_id=external_id)
            audit_trail.record(request, kind="group.provisioned", target=group.display_name)
            _sync(_members_change(request, group, members, set()))
        return Response(project(group_resource(group), request), status=status.HTTP_201_CREATED)


class ScimGroupView(ScimView):
    def get(self, request: Request, group_id: str) -> Response:
        return Response(project(group_resource(group_or_404(group_id)), request))

    def put(self, request: Request, group_id: str) -> Response:
        group = group_or_404(group_id)
        data = self.body(request)
        name = _name(data.get("displayName", group.display_name))
        external_id = optional_text(data.get("externalId"), "externalId", NAME_MAX)
        members = _member_ids(data["members"]) if data.get("members") else set()
        with transaction.atomic():
            renamed = _save(request, group, name=name, external_id=external_id)
            current = set(group.members.values_list("pk", flat=True))
            touched = _members_change(request, group, members, current - members)
            _sync(current | members if renamed else touched)
        return Response(project(group_resource(group), request))

    def patch(self, request: Request, group_id: str) -> Response:
        group = group_or_404(group_id)
        plan = _plan(group, operations(self.body(request)))
        name, external_id, add, remove, replace = plan.name, plan.external_id, plan.add, plan.remove, plan.replace
        with transaction.atomic():
            renamed = _save(request, group, name=name, external_id=external_id)
            current = set(group.members.values_list("pk", flat=True))
            if replace is not None:
                add, remove = replace | add, (current - replace) | remove
            touched = _members_change(request, group, add, remove)
            _sync(current | add if renamed else touched)
        return Response(project(group_resource(group), request))  # 200 with the resource (RFC 7644 §3.5.2)

    def delete(self, request: Request, group_id: str) -> Response:
        group = group_or_404(group_id)
        with transaction.atomic():
            members = set(group.members.values_list("pk", flat=True))
            audit_trail.record(
                request, kind="group.deleted", target=group.display_name, detail={"members": len(members)}
            )
            group.delete()
            memberships_sync(User.objects.filter(pk__in=members).order_by("pk"))
        return Response(status=status.HTTP_204_NO_CONTENT)

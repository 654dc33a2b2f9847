"""Identity provider groups → project memberships (docs/identity.md "Groups").

Staff map a group (by its displayName or externalId) to a project and a role (``GroupMapping``:
Django admin or ``/api/v1/staff/group-mappings``). Whenever a group's members, its names or a mapping
change, ``memberships_sync`` brings each affected person's memberships to what their groups grant:
the highest role of the mapped groups they are in, per project. A membership a group made
(``ProvisionedMembership``) goes when no mapped group grants it any more; one made by hand is raised
to a group's higher role but never removed or lowered by groups. Every change goes through
``projects.services`` and is audited there (``membership.added`` …, via ``scim``).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction
from django.db.models import Q

from governance.models import GroupMapping, ProvisionedMembership, ScimGroup
from projects.audit_trail import record
from projects.models import ROLE_RANK, Membership, Project, Role, User
from projects.scoping import project_scope, unscoped
from projects.services import membership_add, membership_change_role, membership_remove


def mappings_of(groups: Iterable[ScimGroup]) -> list[GroupMapping]:
    query = Q(pk__in=[])
    for group in groups:
        query |= Q(match_on=GroupMapping.MatchOn.DISPLAY_NAME, group__iexact=group.display_name)
        if group.external_id:
            query |= Q(match_on=GroupMapping.MatchOn.EXTERNAL_ID, group=group.external_id)
    return list(GroupMapping.objects.filter(query).select_related("project"))


def granted_roles(user: User) -> dict[Project, Role]:
    """What the user's groups grant: per project, the highest mapped role."""
    granted: dict[Project, Role] = {}
    if not user.is_active:  # offboarding removed the memberships; groups do not bring them back
        return granted
    for mapping in mappings_of(user.scim_groups.all()):
        role, current = Role(mapping.role), granted.get(mapping.project)
        if mapping.project.archived_at is None and (current is None or ROLE_RANK[role] > ROLE_RANK[current]):
            granted[mapping.project] = role
    return granted


@transaction.atomic
def memberships_sync(users: Iterable[User], projects: Iterable[Project] = ()) -> None:
    """Bring ``users``' memberships in the projects their groups grant (and in ``projects``, and in
    those a group once granted them) to what their groups grant now."""
    for user in users:
        granted = granted_roles(user)
        with unscoped():
            provisioned = set(ProvisionedMembership.objects.filter(user=user).values_list("project_id", flat=True))
            touched = {p.pk: p for p in [*granted, *projects]} | {
                p.pk: p for p in Project.objects.filter(pk__in=provisioned)
            }
        for project in touched.values():
            _sync_one(user, project, granted.get(project), project.pk in provisioned)


def _sync_one(user: User, project: Project, role: Role | None, provisioned: bool) -> None:
    with project_scope(project):
        membership = Membership.objects.filter(project=project, user=user).first()
        if role is not None and membership is None:
            membership_add(project=project, user=user, role=role)
            provisioned = True
        elif role is not None and membership is not None:
            lower = ROLE_RANK[Role(membership.role)] < ROLE_RANK[role]
            if membership.role != role and (provisioned or lower):
                membership_change_role(membership=membership, role=role)
        elif membership is not None and provisioned:
            membership_remove(membership=membership)
            provisioned = False
    with unscoped():
        if provisioned:
            ProvisionedMembership.objects.get_or_create(user=user, project=project)
        else:
            ProvisionedMembership.objects.filter(user=user, project=project).delete()


def mapping_members(mapping: GroupMapping) -> list[User]:
    """The people in the groups a mapping names."""
    if mapping.match_on == GroupMapping.MatchOn.EXTERNAL_ID:
        groups = ScimGroup.objects.filter(external_id=mapping.group)
    else:
        groups = ScimGroup.objects.filter(display_name__iexact=mapping.group)
    return list(User.objects.filter(scim_groups__in=groups).distinct())


@transaction.atomic
def mapping_create(*, match_on: str, group: str, project: Project, role: str) -> GroupMapping:
    """A new mapping takes effect at once for the people already in the group."""
    mapping = GroupMapping.objects.create(match_on=match_on, group=group, project=project, role=Role(role))
    record(kind="group_mapping.created", project=project, target=group, detail={"match_on": match_on, "role": role})
    memberships_sync(mapping_members(mapping), [project])
    return mapping


@transaction.atomic
def mapping_delete(*, mapping: GroupMapping) -> None:
    members, project = mapping_members(mapping), mapping.project
    mapping.delete()
    record(kind="group_mapping.deleted", project=project, target=mapping.group, detail={"role": mapping.role})
    memberships_sync(members, [project])

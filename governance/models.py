"""Governance's own tables: the audit trail's chain anchors and its delivery off the box
(docs/security.md "Audit trail"); SCIM groups, what they grant, and the SCIM bearer tokens
(docs/identity.md)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models.functions import Lower

from projects.models import Project, Role


class AuditAnchor(models.Model):
    """Where a chain of audit events now starts after retention removed its oldest rows: the hash of
    the last row removed, which the first kept row names as its predecessor (``governance.integrity``).
    ``chain`` is the project's id, or empty for deployment-wide events. Written by the owner login."""

    chain = models.CharField(max_length=36, unique=True)
    hash = models.CharField(max_length=64)
    up_to_id = models.BigIntegerField()
    at = models.DateTimeField(auto_now=True)


class AuditDelivery(models.Model):
    """How far one chain's events have reached the configured sink (``governance.streaming``): the
    audit table itself is the outbox — its rows are written in the event's own transaction and never
    change — so only this cursor moves."""

    chain = models.CharField(max_length=36, unique=True, help_text="project id, or empty: deployment-wide")
    delivered_id = models.BigIntegerField(default=0)
    delivered_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0, help_text="failures since the last delivery")
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True, default="")
    last_error_at = models.DateTimeField(null=True, blank=True)


class ScimGroup(models.Model):
    """A group the identity provider pushed (``/scim/v2/Groups``); it grants nothing until a
    ``GroupMapping`` names it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    display_name = models.CharField(max_length=255)
    external_id = models.CharField(max_length=255, null=True, blank=True, unique=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="scim_groups", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(Lower("display_name"), name="scimgroup_display_name_unique")]
        ordering = ["display_name"]

    def __str__(self) -> str:
        return self.display_name


class GroupMapping(models.Model):
    """A staff-set rule: members of the group named so get ``role`` in ``project`` while they are in it."""

    class MatchOn(models.TextChoices):
        DISPLAY_NAME = "displayName", "Group displayName"
        EXTERNAL_ID = "externalId", "Group externalId"

    match_on = models.CharField(max_length=16, choices=MatchOn.choices, default=MatchOn.DISPLAY_NAME)
    group = models.CharField(max_length=255, help_text="the group's displayName (any case) or externalId")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="group_mappings")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["match_on", "group", "project"], name="groupmapping_unique"),
        ]
        ordering = ["group"]

    def __str__(self) -> str:
        return f"{self.group} → {self.project} ({self.role})"


class ProvisionedMembership(models.Model):
    """Marks a membership that a group mapping made, so losing the group removes it; a membership
    made by hand is never removed by SCIM groups."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "project"], name="provisionedmembership_unique")]


class ScimToken(models.Model):
    """A SCIM bearer token; only its SHA-256 is kept. Several may be live at once (a rotation)."""

    name = models.CharField(max_length=100)
    secret_hash = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=16, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

"""Governance's own tables: the audit trail's chain anchors and its delivery off the box
(docs/security.md "Audit trail")."""

from __future__ import annotations

from django.db import models


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

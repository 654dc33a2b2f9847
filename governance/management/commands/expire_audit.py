"""``manage.py expire_audit``: the audit trail's retention, run where the owner login is configured
(``DATABASE_OWNER_URL``), e.g. a CronJob beside the migration Job (docs/deployment.md)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from governance.retention import audit_events_expire


class Command(BaseCommand):
    help = "Delete audit events past their project's retention (none of a project under legal hold)."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(f"{audit_events_expire()} audit event(s) expired")

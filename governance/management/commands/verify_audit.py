"""``manage.py verify_audit``: check the audit trail's hash chains (docs/security.md "Audit trail").
Prints each edited, deleted or reordered row and exits 1; silent but for a count, exit 0, when whole."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from governance.integrity import verify


class Command(BaseCommand):
    help = "Verify the audit trail's hash chains; name every edited, deleted or reordered event."

    def handle(self, *args: Any, **options: Any) -> None:
        findings = verify()
        for finding in findings:
            self.stderr.write(str(finding))
        if findings:
            raise CommandError(f"the audit trail was tampered with: {len(findings)} finding(s)", returncode=1)
        self.stdout.write("audit trail intact")

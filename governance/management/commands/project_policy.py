from django.core.management.base import CommandError, CommandParser

from governance.holds import audit_retention_set, legal_hold_release, legal_hold_set
from projects.audit_trail import acting
from projects.management.commands._base import OperatorCommand, project_by_slug


class Command(OperatorCommand):
    help = (
        "Staff's policies of a project: how long its audit trail is kept, and a legal hold that suspends "
        "retention (sessions, access log, audit trail) and the erasure of anyone in it. Each change is audited."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--audit-days", help="days its audit events are kept; 'default': SESSIONLEDGER_AUDIT_DAYS")
        hold = parser.add_mutually_exclusive_group()
        hold.add_argument("--hold", metavar="REASON", help="put the project under legal hold, for this matter")
        hold.add_argument("--release", action="store_true", help="release the project's legal hold")

    def handle(self, *args: object, slug: str, **options: object) -> None:
        project = project_by_slug(slug)
        audit_days, hold, release = options.get("audit_days"), options.get("hold"), options.get("release")
        with acting(via="command"):
            if audit_days is not None:
                if audit_days != "default" and not str(audit_days).isdigit():
                    raise CommandError("--audit-days takes a number of days or 'default'.")
                audit_retention_set(project=project, days=None if audit_days == "default" else int(str(audit_days)))
            if hold is not None:
                legal_hold_set(project=project, reason=str(hold))
            elif release:
                legal_hold_release(project=project)
        held = f"under legal hold since {project.legal_hold_since:%Y-%m-%d}" if project.legal_hold_since else "not held"
        days = project.audit_retention_days
        kept = f"{days} days" if days else "SESSIONLEDGER_AUDIT_DAYS"
        self.stdout.write(f"{project.slug}: audit events kept {kept}; {held}")

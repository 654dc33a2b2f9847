"""``manage.py export_person EMAIL [--output FILE]``: what is kept about a person, as a zip (docs/export-format.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from governance.person_export import person_export_recorded, person_zip
from projects import audit_trail
from projects.management.commands._base import OperatorCommand, user_by_email


class Command(OperatorCommand):
    help = "Write everything kept about a person (account, memberships, sessions, audit, reads) to a zip."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("email")
        parser.add_argument("--output", type=Path, help="the zip to write (default: person-<id>-export.zip here)")

    def handle(self, *args: Any, email: str, output: Path | None, **options: Any) -> None:
        user = user_by_email(email)
        target = output or Path(f"person-{user.pk}-export.zip")
        if target.exists():
            raise CommandError(f"{target} exists; choose another --output.")
        with target.open("xb") as handle:
            for chunk in person_zip(user):
                handle.write(chunk)
        with audit_trail.acting(via="command"):
            person_export_recorded(user)
        self.stdout.write(f"wrote {target} ({target.stat().st_size} bytes) for {user.email}")

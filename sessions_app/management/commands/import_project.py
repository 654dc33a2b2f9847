"""``manage.py import_project ARCHIVE [--slug NEW]``: restore a project's export (docs/export-format.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from projects import audit_trail
from projects.management.commands._base import OperatorCommand
from sessions_app.project_import import project_import


class Command(OperatorCommand):
    help = "Restore a project from its export zip, as a new project; all or nothing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("archive", type=Path)
        parser.add_argument("--slug", help="the new project's slug (default: the exported project's)")

    def handle(self, *args: Any, archive: Path, slug: str | None, **options: Any) -> None:
        if not archive.is_file():
            raise CommandError(f"No such file: {archive}")
        with audit_trail.acting(via="command"):
            result = project_import(archive, slug=slug)
        write = self.stdout.write
        write(
            f"imported {result.project.slug}: {result.sessions} session(s) "
            f"({result.sessions_renumbered} given new ids), "
            f"{result.blobs} blob(s), {result.members} member(s), {result.attributions} attribution record(s), "
            f"{result.share_links} share link(s), {result.commit_links} commit relink(s), "
            f"{result.access_log} access-log row(s), {result.audit_events} audit event(s)"
        )
        if result.repo_dropped:
            write(f"repository {result.repo_dropped} belongs to another project here: the new project has none")
        if result.share_links_skipped:
            write(f"{result.share_links_skipped} share link(s) skipped: their token already opens a session here")
        for line in result.members_not_restored:
            write(f"member not restored, invite them again: {line}")
        for line in result.invitations_not_restored:
            write(f"pending invitation not restored, invite them again: {line}")
        for email in result.authors_unknown:
            write(f"no account for {email}: their sessions and records have no author here")

from django.core.management.base import BaseCommand, CommandError

from projects.models import Project
from projects.scoping import project_scope, unscoped
from sessions_app import blobs
from sessions_app.models import Session
from sessions_app.processing import session_reprocess


class Command(BaseCommand):
    help = "Re-derive content documents from raw blobs (after a parser upgrade)."

    def add_arguments(self, parser):
        parser.add_argument("--project", help="only this project slug")
        parser.add_argument("--session", help="only this session id")

    def handle(self, *args, project: str | None, session: str | None, **options: object) -> None:
        with unscoped():
            sessions = Session.objects.select_related("project", "author").order_by("created_at")
            if project:
                if not Project.objects.filter(slug=project).exists():
                    raise CommandError(f"No project {project!r}.")
                sessions = sessions.filter(project__slug=project)
            if session:
                sessions = sessions.filter(pk=session)
            targets = list(sessions)
        if session and not targets:
            raise CommandError(f"No session {session}.")
        failures = sum(not self._reprocess(target) for target in targets)
        self.stdout.write(f"reprocessed {len(targets) - failures} session(s), {failures} failed")
        if failures:
            raise CommandError(f"{failures} session(s) could not be reprocessed; see the messages above.")

    def _reprocess(self, session: Session) -> bool:
        try:
            with project_scope(session.project):
                session_reprocess(session=session)
        except (blobs.StorageUnavailable, FileNotFoundError, OSError, ValueError) as exc:
            self.stderr.write(f"session {session.pk}: {exc}")
            return False
        return True

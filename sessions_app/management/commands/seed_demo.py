"""Seed (once) a demo admin, a demo project and a few sessions through the real ingest path."""

from __future__ import annotations

import gzip
import io

from django.core.management.base import BaseCommand

from projects import services
from projects.models import Project, Role, User
from projects.scoping import project_scope
from sessions_app.demo import DEMO_COMMITS, demo_transcript
from sessions_app.ingest import Upload, session_ingest
from sessions_app.processing import session_process

DEMO_EMAIL, DEMO_PASSWORD, DEMO_SLUG = "demo@example.com", "demo-password", "demo"


class Command(BaseCommand):
    help = "Create the demo admin, project and sessions on first start (idempotent)."

    def handle(self, *args: object, **options: object) -> None:
        user = User.objects.filter(email=DEMO_EMAIL).first() or services.user_create(
            email=DEMO_EMAIL, password=DEMO_PASSWORD, staff=True
        )
        project = Project.objects.filter(slug=DEMO_SLUG).first()
        if project is None:
            project = services.project_create(
                slug=DEMO_SLUG, name="Demo API", repo="github.com/acme/demo-api", admin=user
            )
            with project_scope(project):
                self._seed_sessions(project, user)
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo login: {DEMO_EMAIL} / {DEMO_PASSWORD}  (project '{project.slug}', role {Role.ADMIN})"
            )
        )

    def _seed_sessions(self, project: Project, user: User) -> None:
        offset = 0
        for index, (sha, message, prompt) in enumerate(DEMO_COMMITS):
            raw = demo_transcript(index, prompt, message)
            data = gzip.compress(raw)
            metadata = {
                "kind": "checkpoint",
                "feature_branch": "010-session-capture",
                "commit_hash": sha,
                "agent": "claude-code",
                "agent_session_id": "demo-conversation",
                "start_offset": offset,
                "end_offset": offset + len(raw),
                "commit_message": message,
                "files_touched": [],
                "diff_stat": {"files": 2, "insertions": 20 + index, "deletions": index},
            }
            result = session_ingest(
                project=project,
                author=user,
                metadata=metadata,
                transcript=Upload(io.BytesIO(data), len(data)),
                subagents=[],
                idempotency_key=f"demo-{sha}",
            )
            session_process(session=result.session)
            offset += len(raw)
        self.stdout.write(f"seeded {len(DEMO_COMMITS)} demo sessions")

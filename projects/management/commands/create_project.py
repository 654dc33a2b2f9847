from projects import services
from projects.management.commands._base import OperatorCommand, user_by_email


class Command(OperatorCommand):
    help = "Create a project, optionally with its first admin."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--name", default="")
        parser.add_argument("--repo", help="git remote, e.g. github.com/acme/api")
        parser.add_argument("--admin", help="e-mail of an existing user who becomes admin")

    def handle(self, *args, slug: str, name: str, repo: str | None, admin: str | None, **options: object) -> None:
        admin_user = user_by_email(admin) if admin else None
        project = services.project_create(slug=slug, name=name, repo=repo, admin=admin_user)
        self.stdout.write(
            f"created project {project.slug} (id {project.pk}, repo {project.repo or '-'})"
            + (f", admin {admin_user.email}" if admin_user else "")
        )

from projects import services
from projects.management.commands._base import OperatorCommand, project_by_slug, user_by_email
from projects.models import Role
from projects.scoping import project_scope


class Command(OperatorCommand):
    help = "Give a user a role in a project (their e-mail address must be verified)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("email")
        parser.add_argument("--role", required=True, choices=Role.values)

    def handle(self, *args, slug: str, email: str, role: str, **options: object) -> None:
        project, user = project_by_slug(slug), user_by_email(email)
        with project_scope(project):
            services.membership_add_verified(project=project, user=user, role=role)
        self.stdout.write(f"added {user.email} to {project.slug} as {role}")

from projects import services
from projects.management.commands._base import OperatorCommand, project_by_slug, user_by_email


class Command(OperatorCommand):
    help = "Create an API token; prints only the secret on stdout (details go to stderr)."

    def add_arguments(self, parser):
        parser.add_argument("email")
        parser.add_argument("--name", required=True)
        parser.add_argument("--project", help="restrict the token to this project slug")
        parser.add_argument("--scopes", default="read,write", help="comma-separated: read,write")
        parser.add_argument("--expires-days", type=int)

    def handle(
        self,
        *args,
        email: str,
        name: str,
        project: str | None,
        scopes: str,
        expires_days: int | None,
        **options: object,
    ) -> None:
        user = user_by_email(email)
        restricted = project_by_slug(project) if project else None
        token, secret = services.token_create(
            user=user, name=name, project=restricted, scopes=scopes.split(","), expires_days=expires_days
        )
        self.stderr.write(f"created token {token.name} ({token.prefix}…) for {user.email}, scopes {token.scopes}")
        self.stdout.write(secret)

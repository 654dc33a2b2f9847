from projects import services
from projects.management.commands._base import OperatorCommand


class Command(OperatorCommand):
    help = "Create a user (login by e-mail)."

    def add_arguments(self, parser):
        parser.add_argument("email")
        parser.add_argument("--password", help="omit for an account that cannot log in with a password yet")
        parser.add_argument("--staff", action="store_true", help="site staff and superuser (Django admin)")

    def handle(self, *args, email: str, password: str | None, staff: bool, **options: object) -> None:
        user = services.user_create(email=email, password=password, staff=staff)
        self.stdout.write(f"created user {user.email} (id {user.pk}{', staff' if staff else ''})")

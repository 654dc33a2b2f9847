from django.core.management.base import CommandParser

from projects.audit_trail import acting, record
from projects.management.commands._base import OperatorCommand, user_by_email


class Command(OperatorCommand):
    help = "Mark an account break-glass (SCIM may never deactivate or delete it), or unmark it with --off."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("email")
        parser.add_argument("--off", action="store_true")

    def handle(self, *args: object, email: str, off: bool, **options: object) -> None:
        user = user_by_email(email)
        if user.break_glass != (not off):
            user.break_glass = not off
            user.save(update_fields=["break_glass"])
            with acting(via="command"):
                record(kind="user.break_glass_changed", target=user.email, detail={"break_glass": user.break_glass})
        self.stdout.write(f"{user.email}: break-glass {'on' if user.break_glass else 'off'}")

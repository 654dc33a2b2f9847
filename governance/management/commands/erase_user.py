from django.core.management.base import CommandParser

from governance.erasure import user_erase
from projects.audit_trail import acting
from projects.management.commands._base import OperatorCommand, user_by_email


class Command(OperatorCommand):
    help = (
        "Erase a person: their sessions (prompts, content, attribution), access-log rows, tokens, device logins, "
        "share links, memberships and account, across projects. One audit event records that it happened."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("email")

    def handle(self, *args: object, email: str, **options: object) -> None:
        user = user_by_email(email)
        with acting(via="command"):
            erased = user_erase(user=user)
        self.stdout.write(
            f"erased {email}: {erased.sessions} session(s) (blobs queued for deletion), "
            f"{erased.access_log_rows} access-log row(s)"
        )

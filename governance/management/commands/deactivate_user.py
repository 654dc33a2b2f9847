from django.core.management.base import CommandParser

from governance.offboarding import user_deactivate
from projects.audit_trail import acting
from projects.management.commands._base import OperatorCommand, user_by_email


class Command(OperatorCommand):
    help = "Deactivate a user and end every access: tokens, device logins, share links, memberships, invitations."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("email")

    def handle(self, *args: object, email: str, **options: object) -> None:
        user = user_by_email(email)
        with acting(via="command"):
            done = user_deactivate(user=user)
        self.stdout.write(
            f"deactivated {user.email}: {done.tokens} token(s) revoked, {done.device_grants} device login(s) denied, "
            f"{done.share_links} share link(s) revoked, {done.memberships} membership(s) removed, "
            f"{done.invitations} invitation(s) revoked, "
            f"{done.browser_sessions} browser session(s) ended"
        )

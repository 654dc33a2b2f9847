from django.core.management.base import CommandError

from governance import sso
from governance.browser_sessions import sso_enforce
from projects.audit_trail import acting
from projects.management.commands._base import OperatorCommand


class Command(OperatorCommand):
    help = (
        "With SESSIONLEDGER_SSO_REQUIRED on, end at once the browser sessions and API tokens not made through "
        "single sign-on (of everyone who may not use a password). Each revoked token is audited."
    )

    def handle(self, *args: object, **options: object) -> None:
        if not sso.sso_required():
            raise CommandError("SESSIONLEDGER_SSO_REQUIRED is off: nothing to enforce.")
        with acting(via="command"):
            done = sso_enforce()
        self.stdout.write(f"{done.browser_sessions} browser session(s) ended, {done.tokens} token(s) revoked")

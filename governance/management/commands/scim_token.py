from django.core.management.base import CommandError, CommandParser

from governance.models import ScimToken
from governance.scim_tokens import scim_token_create, scim_token_revoke
from projects.audit_trail import acting
from projects.management.commands._base import OperatorCommand


class Command(OperatorCommand):
    help = (
        "SCIM bearer tokens, valid without a restart: `create NAME` prints a new one (once), `list`, `revoke PREFIX`."
        " Two can be valid at once during a rotation (docs/identity.md)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["create", "list", "revoke"])
        parser.add_argument("name", nargs="?", help="create: a name; revoke: the token's prefix (from list)")

    def handle(self, *args: object, action: str, name: str | None, **options: object) -> None:
        if action == "list":
            for token in ScimToken.objects.all():
                state = f"revoked {token.revoked_at:%Y-%m-%d}" if token.revoked_at else "valid"
                used = f"{token.last_used_at:%Y-%m-%d %H:%M}" if token.last_used_at else "never"
                self.stdout.write(f"{token.prefix}  {token.name}  {state}  last used {used}")
            return
        if not name:
            raise CommandError(f"{action} needs a name or prefix.")
        with acting(via="command"):
            if action == "create":
                _, secret = scim_token_create(name=name)
                self.stdout.write(secret)
                return
            tokens = list(ScimToken.objects.filter(prefix=name, revoked_at__isnull=True))
            if len(tokens) != 1:
                raise CommandError(f"No valid SCIM token with prefix {name!r} (see `scim_token list`).")
            scim_token_revoke(token=tokens[0])
        self.stdout.write(f"revoked {name}")

"""``migrate`` as the owner login: with two logins (governance/dbroles.py) the runtime one may not change
the schema. The process logs in as the owner for its whole run — data migrations included, which use
the default connection — so nothing of it runs as the runtime login."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.commands.migrate import Command as DjangoMigrate
from django.db import connections


class Command(DjangoMigrate):
    def handle(self, *args: Any, **options: Any) -> None:
        if settings.DATABASE_ROLES_SPLIT and options["database"] == "default":
            owner, default = settings.DATABASES["owner"], connections["default"]
            default.close()
            default.settings_dict.update(USER=owner["USER"], PASSWORD=owner["PASSWORD"])
        super().handle(*args, **options)

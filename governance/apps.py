from django.apps import AppConfig
from django.db.models.signals import post_migrate


class GovernanceConfig(AppConfig):
    name = "governance"
    verbose_name = "Identity and governance"

    def ready(self) -> None:
        from governance import dbroles, streaming

        post_migrate.connect(dbroles.after_migrate, sender=self)
        streaming.connect()

from django.apps import AppConfig


class GovernanceConfig(AppConfig):
    name = "governance"
    verbose_name = "Identity and governance"

    def ready(self) -> None:
        from governance import auth_events

        auth_events.connect()

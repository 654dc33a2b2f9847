from django.apps import AppConfig


class SessionsAppConfig(AppConfig):
    name = "sessions_app"
    verbose_name = "Captured sessions"

    def ready(self) -> None:
        from sessions_app import (
            lookups,  # noqa: F401  (registers commit_hash__hexprefix)
            metrics,  # noqa: F401  (registers the sessions' state with /metrics)
        )

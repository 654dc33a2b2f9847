from django.apps import AppConfig
from django.db.models.signals import post_migrate


class GovernanceConfig(AppConfig):
    name = "governance"
    verbose_name = "Identity and governance"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from governance import auth_events, browser_sessions, dbroles, retention, streaming  # noqa: F401 (tasks)

        auth_events.connect()
        user_logged_in.connect(browser_sessions.on_sign_in, dispatch_uid="governance.on_sign_in")
        post_migrate.connect(dbroles.after_migrate, sender=self)
        streaming.connect()

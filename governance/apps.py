from django.apps import AppConfig


class GovernanceConfig(AppConfig):
    name = "governance"
    verbose_name = "Identity and governance"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from governance import auth_events, browser_sessions

        auth_events.connect()
        user_logged_in.connect(browser_sessions.on_sign_in, dispatch_uid="governance.on_sign_in")

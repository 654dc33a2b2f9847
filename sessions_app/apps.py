from django.apps import AppConfig


class SessionsAppConfig(AppConfig):
    name = "sessions_app"
    verbose_name = "Captured sessions"

    def ready(self) -> None:
        from django.db.models.signals import pre_delete

        from projects.models import Membership
        from projects.sso import account_reclaimed
        from sessions_app.offboarding import account_reclaimed_end
        from sessions_app.shares import revoke_links_of_leaving_member

        pre_delete.connect(revoke_links_of_leaving_member, sender=Membership, dispatch_uid="share-links-of-member")
        # Share links are this app's: single sign-on (projects) asks here to end a reclaimed account's access.
        account_reclaimed.connect(account_reclaimed_end, dispatch_uid="credentials-of-reclaimed-account")
        from sessions_app import (
            lookups,  # noqa: F401  (registers commit_hash__hexprefix)
            metrics,  # noqa: F401  (registers the sessions' state with /metrics)
        )

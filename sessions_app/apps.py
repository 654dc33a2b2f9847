from django.apps import AppConfig


class SessionsAppConfig(AppConfig):
    name = "sessions_app"
    verbose_name = "Captured sessions"

    def ready(self) -> None:
        from django.db.models.signals import pre_delete

        from projects.models import Membership
        from sessions_app.shares import revoke_links_of_leaving_member

        pre_delete.connect(revoke_links_of_leaving_member, sender=Membership, dispatch_uid="share-links-of-member")
        from sessions_app import (
            lookups,  # noqa: F401  (registers commit_hash__hexprefix)
            metrics,  # noqa: F401  (registers the sessions' state with /metrics)
        )

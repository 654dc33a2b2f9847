from django.apps import AppConfig


class GovernanceConfig(AppConfig):
    name = "governance"
    verbose_name = "Identity and governance"

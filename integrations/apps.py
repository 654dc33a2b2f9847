from django.apps import AppConfig


class IntegrationsConfig(AppConfig):
    name = "integrations"
    verbose_name = "Forge integrations"

    def ready(self) -> None:
        from integrations.selectors import sessions_of_pull_request
        from sessions_app.filters import install_pull_request_filter

        install_pull_request_filter(sessions_of_pull_request)

from django.apps import AppConfig


class IntegrationsConfig(AppConfig):
    name = "integrations"
    verbose_name = "Forge integrations"

    def ready(self) -> None:
        from integrations.insights import merged_pull_requests
        from integrations.selectors import sessions_of_pull_request
        from sessions_app.filters import install_pull_request_filter
        from sessions_app.insights import CHARTS

        install_pull_request_filter(sessions_of_pull_request)
        CHARTS["merged_pull_requests"] = merged_pull_requests  # the page, its CSV and the API's insights

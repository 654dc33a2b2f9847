"""The forges' webhooks, under ``/integrations/``."""

from django.urls import path

from integrations import webhooks

urlpatterns = [
    path("github/webhook", webhooks.github_webhook, name="github-webhook"),
    path("gitlab/webhook", webhooks.gitlab_webhook, name="gitlab-webhook"),
]

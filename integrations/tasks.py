"""Syncing a pull request off the request (its commits, its merge, its comment): the webhook answers at once."""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from django.utils import timezone

from integrations.forges.http import ForgeError
from integrations.models import PullRequest, WebhookDelivery
from integrations.services import pull_request_sync
from projects.tasking import TransientError, project_task

logger = logging.getLogger(__name__)

# Delivery ids are kept long past the forges' redelivery windows (GitHub: three days), then pruned.
DELIVERY_DAYS = 30


@project_task(model=PullRequest, name="integrations.pull_request_commits_sync", related=("project", "binding"))
def pull_request_commits_sync(pr: PullRequest) -> None:
    """The task keeps its first name (queued tasks find it); it now syncs the merge and comment too."""
    try:
        pull_request_sync(pr)
    except ForgeError as exc:
        raise TransientError(str(exc)) from exc


def enqueue_commits_sync(pr_id: int) -> None:
    """Queue the fetch; when the broker is down the next event for the PR queues it again."""
    try:
        pull_request_commits_sync.apply_async(args=[str(pr_id)], retry=False)
    except Exception as exc:
        logger.warning("could not enqueue the commits of pull request %s (%s)", pr_id, exc)


@shared_task(name="integrations.prune_deliveries", ignore_result=True)  # type: ignore[untyped-decorator, unused-ignore]
def deliveries_prune() -> int:
    """Delete the delivery ids older than ``DELIVERY_DAYS``: no forge replays them any more."""
    cutoff = timezone.now() - timedelta(days=DELIVERY_DAYS)
    deleted, _ = WebhookDelivery.objects.filter(received_at__lt=cutoff).delete()
    return deleted

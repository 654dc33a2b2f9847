"""Fetching a pull request's commits off the request: the webhook answers at once."""

from __future__ import annotations

import logging

from integrations.forges.http import ForgeError
from integrations.models import PullRequest
from integrations.services import commits_sync
from projects.tasking import TransientError, project_task

logger = logging.getLogger(__name__)


@project_task(model=PullRequest, name="integrations.pull_request_commits_sync", related=("project", "binding"))
def pull_request_commits_sync(pr: PullRequest) -> None:
    try:
        commits_sync(pr)
    except ForgeError as exc:
        raise TransientError(str(exc)) from exc


def enqueue_commits_sync(pr_id: int) -> None:
    """Queue the fetch; when the broker is down the next event for the PR queues it again."""
    try:
        pull_request_commits_sync.apply_async(args=[str(pr_id)], retry=False)
    except Exception as exc:
        logger.warning("could not enqueue the commits of pull request %s (%s)", pr_id, exc)

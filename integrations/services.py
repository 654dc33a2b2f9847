"""What a verified event changes: installations, and the pull requests of bound repositories
(docs/forges.md). An event for a repository no binding names changes nothing."""

from __future__ import annotations

import logging

from django.db import IntegrityError, transaction

from integrations.forges import ADAPTERS
from integrations.forges.base import Event, InstallationEvent, PullRequestEvent, PushEvent, Repository
from integrations.models import ForgeInstallation, PullRequest, PullRequestCommit, RepositoryBinding, WebhookDelivery
from projects.scoping import project_scope

logger = logging.getLogger(__name__)


def delivery_record(*, forge: str, delivery_id: str, event: str) -> bool:
    """Whether this delivery is new; a replay (or a concurrent copy) is refused by the constraint."""
    try:
        with transaction.atomic():
            WebhookDelivery.objects.create(forge=forge, delivery_id=delivery_id, event=event)
    except IntegrityError:
        return False
    return True


def binding_for(forge: str, installation_id: str, repository_id: str) -> RepositoryBinding | None:
    """The binding of this repository *through this installation*, never through another one."""
    return (
        RepositoryBinding.objects.select_related("installation", "project")
        .filter(
            installation__forge=forge,
            installation__external_id=installation_id,
            installation__deleted=False,
            installation__suspended=False,
            repository_id=repository_id,
            project__archived_at__isnull=True,
        )
        .first()
    )


def event_apply(forge: str, event: Event) -> PullRequest | None:
    """Apply the event; the pull request whose commits must be fetched again, if any."""
    if isinstance(event, InstallationEvent):
        installation_apply(forge, event)
        return None
    if isinstance(event, PushEvent):
        return None  # relinking the default branch on push is not built yet (docs/forges.md)
    return pull_request_apply(forge, event)


def installation_apply(forge: str, event: InstallationEvent) -> None:
    installation, _ = ForgeInstallation.objects.get_or_create(
        forge=forge, external_id=event.installation_id, defaults={"account": event.account}
    )
    installation.account = event.account
    if event.action in ("deleted", "suspend", "unsuspend", "created"):
        installation.deleted = event.action == "deleted"
        installation.suspended = event.action == "suspend"
    installation.save()
    removed = {repository.forge_id for repository in event.removed}
    if removed or installation.deleted:
        # A repository the App may no longer read feeds no project any more.
        bindings = installation.bindings.all()
        (bindings if installation.deleted else bindings.filter(repository_id__in=removed)).delete()


def pull_request_apply(forge: str, event: PullRequestEvent) -> PullRequest | None:
    binding = binding_for(forge, event.installation_id, event.repository.forge_id)
    if binding is None:
        return None
    with project_scope(binding.project):
        pr, _ = PullRequest.objects.update_or_create(
            binding=binding,
            number=event.number,
            defaults={
                "project": binding.project,
                "title": event.title[:500],
                "author": event.author[:255],
                "base_ref": event.base_ref[:255],
                "head_ref": event.head_ref[:255],
                "state": event.state,
                "head_sha": event.head_sha[:64],
                "merged": event.merged,
                "merge_commit_sha": event.merge_commit_sha[:64],
            },
        )
    return pr if pr.commits_synced_sha != pr.head_sha else None


def commits_sync(pr: PullRequest) -> None:
    """Fetch the PR's commits and record them in order; a commit the PR no longer holds (a force
    push) is kept, marked ``still_in_pr=False``. Runs inside the PR's project scope."""
    binding = pr.binding
    adapter = ADAPTERS[binding.installation.forge]
    repository = _repository(binding)
    head = pr.head_sha
    shas = adapter.pull_request_commits(binding.installation.external_id, repository, pr.number)
    with transaction.atomic():
        # Two fetches of one PR (two quick pushes) take turns: the PR's row is the lock.
        PullRequest.objects.select_for_update().filter(pk=pr.pk).first()
        known = {c.sha: c for c in PullRequestCommit.objects.filter(pull_request=pr)}
        for position, sha in enumerate(shas):
            commit = known.pop(sha, None)
            if commit is None:
                PullRequestCommit.objects.create(project=pr.project, pull_request=pr, sha=sha, position=position)
            elif commit.position != position or not commit.still_in_pr:
                commit.position, commit.still_in_pr = position, True
                commit.save(update_fields=["position", "still_in_pr"])
        PullRequestCommit.objects.filter(pk__in=[c.pk for c in known.values()]).update(still_in_pr=False)
        PullRequest.objects.filter(pk=pr.pk).update(commits_synced_sha=head)


def _repository(binding: RepositoryBinding) -> Repository:
    return Repository(forge_id=binding.repository_id, full_name=binding.full_name)

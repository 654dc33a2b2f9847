"""What a verified event changes: installations, and the pull requests of bound repositories
(docs/forges.md). An event for a repository no binding names changes nothing."""

from __future__ import annotations

import logging

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from integrations import comments
from integrations.forges import ADAPTERS, http
from integrations.forges.base import Event, InstallationEvent, PullRequestEvent, PushEvent, Repository
from integrations.models import (
    ForgeInstallation,
    MergeMethod,
    PullRequest,
    PullRequestCommit,
    RepositoryBinding,
    WebhookDelivery,
)
from projects.scoping import project_scope
from sessions_app.models import CommitLink
from sessions_app.relink import relink_commits

logger = logging.getLogger(__name__)

LOCK_SPACE = 7101  # pg_advisory_xact_lock's first key: a PR's sync (the second key is the PR's id)
MERGED_PER_PUSH = 20  # merged PRs a push to the default branch syncs at most


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


def event_apply(forge: str, event: Event) -> list[PullRequest]:
    """Apply the event; the pull requests the worker must sync (commits, merge relink, comment)."""
    if isinstance(event, InstallationEvent):
        installation_apply(forge, event)
        return []
    if isinstance(event, PushEvent):
        return push_apply(forge, event)
    pr = pull_request_apply(forge, event)
    return [pr] if pr is not None else []


def push_apply(forge: str, event: PushEvent) -> list[PullRequest]:
    """A push to the default branch is where a merge lands: the merged PRs of the repository whose
    commits are not relinked yet (their ``closed`` event came first, or its sync failed) are synced."""
    binding = binding_for(forge, event.installation_id, event.repository.forge_id)
    if binding is None or not event.default_branch or event.ref != f"refs/heads/{event.default_branch}":
        return []
    with project_scope(binding.project):
        return list(
            PullRequest.objects.filter(
                binding=binding, merged=True, merge_method="", base_ref=event.default_branch
            ).order_by("number")[:MERGED_PER_PUSH]
        )


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
                "base_sha": event.base_sha[:64],
            },
        )
        if pr.merged and pr.merged_at is None:
            # Stamped once: later edits and comment writes move updated_at, never the merge.
            PullRequest.objects.filter(pk=pr.pk, merged_at__isnull=True).update(merged_at=timezone.now())
    return pr if pr_needs_sync(pr) else None


def pr_needs_sync(pr: PullRequest) -> bool:
    return pr.commits_synced_sha != pr.head_sha or (pr.merged and not pr.merge_method)


def pull_request_sync(pr: PullRequest) -> None:
    """The PR's commits, then (once merged) its merge relinked, then its comment. Runs inside the
    PR's project scope and transaction; two syncs of one PR (two quick pushes, two racing deliveries)
    take turns on a lock of their own, not on the PR's row, which the webhooks keep updating meanwhile."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [LOCK_SPACE, pr.pk % 2**31])
    fresh = PullRequest.objects.select_related("binding__installation", "project").filter(pk=pr.pk).first()
    if fresh is None:
        return
    pr = fresh
    if pr.commits_synced_sha != pr.head_sha:
        commits_sync(pr)
    if pr.merged and not pr.merge_method and pr.merge_commit_sha:
        merge_relink(pr)
    comments.comment_update(pr)


def commits_sync(pr: PullRequest) -> None:
    """Fetch the PR's commits and record them in order; a commit the PR no longer holds (a force
    push) is kept, marked ``still_in_pr=False``, and linked to the commit that replaced it when
    their patch ids match (an amend or a rebase of the branch)."""
    binding = pr.binding
    adapter = ADAPTERS[binding.installation.forge]
    head = pr.head_sha
    shas = adapter.pull_request_commits(
        binding.installation.external_id, _repository(binding), pr.number, base_sha=pr.base_sha, head_sha=head
    )
    known = {c.sha: c for c in PullRequestCommit.objects.filter(pull_request=pr)}
    added: list[PullRequestCommit] = []
    for position, sha in enumerate(shas):
        commit = known.pop(sha, None)
        if commit is None:
            added.append(
                PullRequestCommit.objects.create(project=pr.project, pull_request=pr, sha=sha, position=position)
            )
        elif commit.position != position or not commit.still_in_pr:
            commit.position, commit.still_in_pr = position, True
            commit.save(update_fields=["position", "still_in_pr"])
    dropped = [c for c in known.values() if c.still_in_pr]
    PullRequestCommit.objects.filter(pk__in=[c.pk for c in dropped]).update(still_in_pr=False)
    if dropped and added:
        _link_by_patch_id(pr, old=dropped, new=added)
    PullRequest.objects.filter(pk=pr.pk).update(commits_synced_sha=head)
    pr.commits_synced_sha = head


def patch_ids(pr: PullRequest, commits: list[PullRequestCommit]) -> dict[str, str]:
    """sha → patch id of each commit, fetched once and kept on the commit's row."""
    binding = pr.binding
    adapter = ADAPTERS[binding.installation.forge]
    for commit in commits:
        if commit.patch_id is None:
            try:
                found = adapter.commit(binding.installation.external_id, _repository(binding), commit.sha)
                commit.patch_id = found.patch_id
            except http.Gone:
                commit.patch_id = ""  # a force push's commit the forge no longer has: nothing to match
            commit.save(update_fields=["patch_id"])
    return {c.sha: c.patch_id or "" for c in commits}


def _link_by_patch_id(pr: PullRequest, *, old: list[PullRequestCommit], new: list[PullRequestCommit]) -> None:
    old_ids = patch_ids(pr, old)
    by_id = {patch: sha for sha, patch in old_ids.items() if patch}
    pairs = [(by_id[patch], sha) for sha, patch in patch_ids(pr, new).items() if patch in by_id]
    relink(pr, pairs)


def merge_relink(pr: PullRequest) -> None:
    """Link the default branch's new commits to the PR's, whatever the merge method, so ``blame`` and
    ``why`` on the default branch find the PR's conversations (docs/forges.md):

    - a merge commit (two parents), or a fast-forward (the tip is one of the PR's commits): the PR's
      commits are in the default branch's history as they are; nothing to link;
    - a rebase: the tip's patch id is the PR's last commit's; walking the first parents back, each
      new commit is linked to the PR's commit of the same patch id;
    - a squash: one new commit holds them all; it is linked to each of the PR's commits.
    """
    binding = pr.binding
    adapter = ADAPTERS[binding.installation.forge]
    installation, repository = binding.installation.external_id, _repository(binding)
    commits = list(PullRequestCommit.objects.filter(pull_request=pr, still_in_pr=True).order_by("position"))
    shas = [c.sha for c in commits]
    tip = adapter.commit(installation, repository, pr.merge_commit_sha)
    pairs: list[tuple[str, str]] = []
    if len(tip.parents) > 1 or tip.sha in shas:
        method = MergeMethod.MERGE
    elif commits and tip.patch_id and tip.patch_id == patch_ids(pr, commits[-1:])[shas[-1]]:
        method = MergeMethod.REBASE
        remaining: dict[str, list[str]] = {}
        for sha, patch in patch_ids(pr, commits).items():
            remaining.setdefault(patch, []).append(sha)
        new = tip
        while len(pairs) < len(commits):
            candidates = remaining.get(new.patch_id) if new.patch_id else None
            if not candidates:
                break  # past the rebased commits: the default branch's own history
            pairs.append((candidates.pop(), new.sha))
            if len(new.parents) != 1 or len(pairs) == len(commits):
                break
            new = adapter.commit(installation, repository, new.parents[0])
    else:
        method = MergeMethod.SQUASH
        pairs = [(sha, tip.sha) for sha in shas]
    relink(pr, pairs)
    PullRequest.objects.filter(pk=pr.pk).update(merge_method=method)
    pr.merge_method = method


def relink(pr: PullRequest, pairs: list[tuple[str, str]]) -> int:
    """Record (old → new) pairs through the client's own relink mechanism (``CommitLink``). A commit
    already relinked (an amend the force push replaced) passes its older hashes on: lookups follow
    one link, so the new commit is linked to those too."""
    olds = [old for old, _ in pairs]
    earlier: dict[str, list[str]] = {}
    for new_hash, old_hash in CommitLink.objects.filter(project=pr.project, new_hash__in=olds).values_list(
        "new_hash", "old_hash"
    ):
        earlier.setdefault(new_hash, []).append(old_hash)
    expanded = [
        {"old": older, "new": new} for old, new in pairs for older in [old, *earlier.get(old, [])] if older != new
    ]
    return relink_commits(project=pr.project, user=None, pairs=expanded)


def _repository(binding: RepositoryBinding) -> Repository:
    return Repository(forge_id=binding.repository_id, full_name=binding.full_name)

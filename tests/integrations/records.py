"""A bound repository's pull request with its commits, as the webhooks and the fetch leave them."""

from __future__ import annotations

from integrations.models import ForgeInstallation, PullRequest, PullRequestCommit, RepositoryBinding
from projects.models import Project
from projects.scoping import unscoped


def pull_request(project: Project, *, number: int, commits: list[str], dropped: tuple[str, ...] = ()) -> PullRequest:
    installation, _ = ForgeInstallation.objects.get_or_create(forge="github", external_id="1001", account="acme")
    binding, _ = RepositoryBinding.objects.get_or_create(
        installation=installation, repository_id="186853002", defaults={"full_name": "acme/api", "project": project}
    )
    with unscoped():
        pr = PullRequest.objects.create(
            project=project,
            binding=binding,
            number=number,
            title="Retry the upload on 503",
            author="octocat",
            base_ref="main",
            head_ref="retry-upload",
            head_sha=commits[-1],
            commits_synced_sha=commits[-1],
        )
        for position, sha in enumerate([*commits, *dropped]):
            PullRequestCommit.objects.create(
                project=project, pull_request=pr, sha=sha, position=position, still_in_pr=sha not in dropped
            )
    return pr

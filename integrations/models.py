"""Forge installations, the repositories staff bound to projects, and the pull requests seen on them
(docs/forges.md)."""

from __future__ import annotations

from django.db import models

from projects.managers import ProjectScopedManager
from projects.models import Project


class Forge(models.TextChoices):
    GITHUB = "github", "GitHub"
    GITLAB = "gitlab", "GitLab"


class WebhookDelivery(models.Model):
    """One accepted delivery: its id is unique, so a replayed delivery is refused by the database
    even when two copies arrive at once."""

    forge = models.CharField(max_length=16, choices=Forge.choices)
    delivery_id = models.CharField(max_length=100)
    event = models.CharField(max_length=64)
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["forge", "delivery_id"], name="webhookdelivery_unique")]


class ForgeInstallation(models.Model):
    """A GitHub App installation (created by its ``installation`` events), or a GitLab namespace
    whose webhook staff configured. It reaches no project until staff bind one of its repositories."""

    forge = models.CharField(max_length=16, choices=Forge.choices)
    external_id = models.CharField(max_length=100, help_text="GitHub: the installation id; GitLab: the namespace")
    account = models.CharField(max_length=255, blank=True, default="")
    suspended = models.BooleanField(default=False)
    deleted = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["forge", "external_id"], name="forgeinstallation_unique")]

    def __str__(self) -> str:
        return f"{self.forge}:{self.account or self.external_id}"


class RepositoryBinding(models.Model):
    """Staff's explicit statement that this repository of this installation feeds this project.
    Events are matched on (installation, repository id): a repository id arriving through another
    installation finds nothing."""

    installation = models.ForeignKey(ForgeInstallation, on_delete=models.CASCADE, related_name="bindings")
    repository_id = models.CharField(max_length=100, help_text="the forge's numeric repository/project id")
    full_name = models.CharField(max_length=255, help_text="owner/name, for people")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["installation", "repository_id"], name="repositorybinding_unique")
        ]

    def __str__(self) -> str:
        return f"{self.full_name} → {self.project_id}"


class MergeMethod(models.TextChoices):
    MERGE = "merge", "merge commit"
    SQUASH = "squash"
    REBASE = "rebase"


class PullRequest(models.Model):
    """A pull (GitLab: merge) request of a bound repository, as its last event described it."""

    class State(models.TextChoices):
        OPEN = "open"
        CLOSED = "closed"
        MERGED = "merged"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    binding = models.ForeignKey(RepositoryBinding, on_delete=models.CASCADE, related_name="pull_requests")
    number = models.PositiveIntegerField()
    title = models.CharField(max_length=500)
    author = models.CharField(max_length=255)
    base_ref = models.CharField(max_length=255)
    head_ref = models.CharField(max_length=255)
    state = models.CharField(max_length=8, choices=State.choices, default=State.OPEN)
    head_sha = models.CharField(max_length=64)
    merged = models.BooleanField(default=False)
    merged_at = models.DateTimeField(null=True, blank=True, help_text="when the ledger first saw the PR merged")
    merge_commit_sha = models.CharField(max_length=64, blank=True, default="")
    base_sha = models.CharField(max_length=64, blank=True, default="", help_text="the base the forge compared with")
    merge_method = models.CharField(
        max_length=8,
        choices=MergeMethod.choices,
        blank=True,
        default="",
        help_text="how the merge reached the default branch; empty until its commits are relinked",
    )
    comment_id = models.CharField(max_length=64, blank=True, default="", help_text="the forge's id of our comment")
    check_run_id = models.CharField(max_length=64, blank=True, default="", help_text="GitHub: our check run's id")
    check_run_sha = models.CharField(max_length=64, blank=True, default="", help_text="the head it was made on")
    comment_state = models.JSONField(default=dict, blank=True, help_text="what the comment said at the last push")
    commits_synced_sha = models.CharField(max_length=64, blank=True, default="", help_text="head the commits match")
    updated_at = models.DateTimeField(auto_now=True)

    objects = ProjectScopedManager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["binding", "number"], name="pullrequest_unique")]
        indexes = [models.Index(fields=["project", "number"])]


class PullRequestCommit(models.Model):
    """A commit the pull request has held. A force push leaves the commits it dropped here with
    ``still_in_pr`` false: their conversations stay findable as "no longer in the PR"."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    pull_request = models.ForeignKey(PullRequest, on_delete=models.CASCADE, related_name="commits")
    sha = models.CharField(max_length=64)
    position = models.PositiveIntegerField(help_text="0 is the oldest commit")
    still_in_pr = models.BooleanField(default=True)
    patch_id = models.CharField(
        max_length=40, null=True, blank=True, help_text="integrations.patchid; null until fetched, empty: no text"
    )

    objects = ProjectScopedManager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["pull_request", "sha"], name="pullrequestcommit_unique")]
        indexes = [models.Index(fields=["project", "sha"])]
        ordering = ["-still_in_pr", "position"]


class ForgeCommentSettings(models.Model):
    """What the PR comment may say. Anyone who reads the repository reads the comment, and they need
    not be project members: by default it carries counts and links only (docs/forges.md)."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="+")
    show_titles_and_prompts = models.BooleanField(
        default=False, help_text="put the conversations' titles and prompt excerpts in the PR comment"
    )
    updated_at = models.DateTimeField(auto_now=True)

    objects = ProjectScopedManager()

"""A captured session: one segment of an agent's conversation, linked to a commit or a task.

Metadata lives here; the conversation bytes live in object storage under keys that contain no
user-controlled text (see ``sessions_app.blobs``).
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import Q
from django_scopes import ScopedManager

from projects.models import Project


class Kind(models.TextChoices):
    CHECKPOINT = "checkpoint"
    TASK = "task"
    CLEAR = "clear"
    END = "end"
    MANUAL = "manual"


class Status(models.TextChoices):
    PROCESSING = "processing"
    COMPLETE = "complete"
    REJECTED = "rejected"
    ABANDONED = "abandoned"
    FAILED = "failed"


FINAL_TASK_STATUSES = (Status.COMPLETE, Status.REJECTED, Status.ABANDONED)


class Session(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="sessions")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.CHECKPOINT)
    feature_branch = models.CharField(max_length=255, blank=True, default="")
    commit_hash = models.CharField(max_length=40, null=True, blank=True)
    task_id = models.CharField(max_length=100, null=True, blank=True)
    amends = models.CharField(max_length=40, null=True, blank=True)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PROCESSING)
    requested_status = models.CharField(
        max_length=16,
        choices=Status.choices,
        default=Status.COMPLETE,
        help_text="the status the session takes once processed",
    )
    agent = models.CharField(max_length=32, default="claude-code")
    agent_version = models.CharField(max_length=32, blank=True, default="")
    agent_session_id = models.CharField(max_length=100, blank=True, default="")
    start_offset = models.BigIntegerField(null=True, blank=True)
    end_offset = models.BigIntegerField(null=True, blank=True)
    previous = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    raw_storage_key = models.CharField(max_length=255)
    content_storage_key = models.CharField(max_length=255, blank=True, default="")
    subagents = models.JSONField(default=list, blank=True, help_text="[{agent_id, key, start_offset, end_offset}]")
    size_bytes = models.BigIntegerField(default=0, help_text="stored gzip bytes")
    raw_size_bytes = models.BigIntegerField(default=0)
    message_count = models.IntegerField(default=0)
    turn_count = models.IntegerField(default=0)
    title = models.CharField(max_length=200, blank=True, default="")
    summary = models.TextField(blank=True, default="")
    digest = models.JSONField(default=dict, blank=True, help_text="precomputed facts for context and insights")
    files_touched = models.JSONField(default=list, blank=True)
    commit_message = models.TextField(blank=True, default="")
    patch_id = models.CharField(max_length=40, blank=True, default="")
    diff_stat = models.JSONField(default=dict, blank=True)
    redaction = models.JSONField(default=dict, blank=True)
    server_redaction = models.JSONField(
        default=dict, blank=True, help_text="secrets the server's second wall redacted, per rule kind"
    )
    idempotency_key = models.CharField(max_length=200, null=True, blank=True)
    search_vector = SearchVectorField(null=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    captured_at = models.DateTimeField(null=True, blank=True)
    processed_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    # Hostile-input guards (sessions_app.ingest, sessions_app.tasks): a re-upload of the same
    # offsets with other bytes is a conflict; a session that keeps killing workers is given up.
    raw_sha256 = models.CharField(max_length=64, blank=True, default="", help_text="of the decompressed transcript")
    processing_attempts = models.PositiveSmallIntegerField(default=0)

    objects = ScopedManager(project="project")

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(commit_hash__isnull=False) | Q(task_id__isnull=False), name="session_has_commit_or_task"
            ),
            models.UniqueConstraint(
                fields=["project", "commit_hash"],
                condition=Q(kind="checkpoint"),
                name="session_one_checkpoint_per_commit",
            ),
            models.UniqueConstraint(fields=["project", "idempotency_key"], name="session_unique_idempotency_key"),
            models.CheckConstraint(condition=Q(raw_size_bytes__gte=0), name="session_raw_size_non_negative"),
        ]
        indexes = [
            models.Index(fields=["project", "-created_at", "-id"], name="session_project_recent"),
            models.Index(fields=["project", "feature_branch", "-created_at"], name="session_branch_recent"),
            models.Index(
                fields=["project", "commit_hash"], name="session_commit", opclasses=["", "varchar_pattern_ops"]
            ),
            models.Index(fields=["project", "task_id"], name="session_task"),
            models.Index(fields=["author", "-created_at"], name="session_author_recent"),
            models.Index(fields=["project", "agent_session_id", "end_offset"], name="session_agent_segment"),
            models.Index(fields=["status", "created_at"], name="session_status_age"),
            GinIndex(fields=["search_vector"], name="session_search"),
            GinIndex(fields=["files_touched"], name="session_files"),
            # Insights' exact median sizes: walk to the middle of the project's sizes in order (no sort).
            models.Index(
                fields=["project", "raw_size_bytes"],
                include=["status", "created_at", "feature_branch"],
                name="session_raw_size",
            ),
            models.Index(
                fields=["project", "size_bytes"],
                include=["status", "created_at", "feature_branch"],
                name="session_stored_size",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.commit_hash or self.task_id} ({self.status})"

    @property
    def ref(self) -> str:
        """What the session is about: the short commit, or the task id."""
        return self.task_id if self.kind == Kind.TASK and self.task_id else (self.commit_hash or "")[:12]


class CommitLink(models.Model):
    """After a rebase or squash, a new commit hash that carries an old one's sessions.

    The client matches commits by ``git patch-id --stable`` (or squash content) and posts pairs;
    commit lookups and permalinks then resolve the new hash to the old hash's sessions.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    old_hash = models.CharField(max_length=40)
    new_hash = models.CharField(max_length=40)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ScopedManager(project="project")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "old_hash", "new_hash"], name="commitlink_unique")]
        indexes = [
            models.Index(fields=["project", "new_hash"], name="commitlink_new", opclasses=["", "varchar_pattern_ops"])
        ]

    def __str__(self) -> str:
        return f"{self.old_hash[:10]} → {self.new_hash[:10]}"


class AccessLog(models.Model):
    """Who read which session's content, when, from where (pages, messages API, raw, MCP)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    session_id = models.UUIDField(help_text="kept as a plain id so the record outlives a deleted session")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    at = models.DateTimeField(auto_now_add=True)
    via = models.CharField(max_length=16)
    ip = models.GenericIPAddressField(null=True, blank=True)
    user_agent = models.CharField(max_length=300, blank=True, default="")

    objects = ScopedManager(project="project")

    class Meta:
        ordering = ["-at"]
        indexes = [
            models.Index(fields=["project", "-at"], name="accesslog_project_recent"),
            models.Index(fields=["session_id", "-at"], name="accesslog_session_recent"),
        ]

    def __str__(self) -> str:
        return f"{self.user} read {self.session_id} via {self.via}"


class InsightsDay(models.Model):
    """One day's totals of one facet of a project's sessions, for insights (SPEC §5).

    Written only by the database: a trigger on ``sessions_app_session`` (migration 0006) adds a
    session's facts when it is counted (status final and not failed) and takes them away when it
    changes or is deleted, so the insights page sums a few hundred rows per chart instead of
    every session (and never unpacks a digest). ``branch`` is ``""`` for the whole project and a
    branch name for that branch's own copy. Facets and what ``sessions``/``a``/``b`` hold:

    - ``author`` (key: author id or ""): sessions, turns
    - ``commit`` (checkpoints; key: turn count): commits, messages
    - ``task`` (task sessions; key: status): sessions
    - ``branch`` (key: branch name): sessions, turns
    - ``tool`` (key: tool name): sessions using it, calls, errors

    Read only by ``sessions_app.insights`` with SQL inside a project scope, where row-level
    security shows this project's rows alone; no ORM query touches it, hence no scoped manager.
    """

    pk = models.CompositePrimaryKey("project", "branch", "facet", "day", "key")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    branch = models.CharField(max_length=255, blank=True)
    facet = models.CharField(max_length=8)
    day = models.DateField()
    key = models.TextField(blank=True)
    sessions = models.IntegerField(default=0)
    a = models.BigIntegerField(default=0)
    b = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.day} {self.facet} {self.key}: {self.sessions}"


class Attribution(models.Model):
    """The Agent Trace record uploaded with a checkpoint: which added lines the agent wrote.

    Either ``record`` holds the validated record, or it is null and ``error`` says which field
    made the server refuse it (the session itself was accepted; docs/attribution.md).
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    session = models.OneToOneField(Session, on_delete=models.CASCADE, related_name="attribution")
    record = models.JSONField(null=True, blank=True)
    error = models.JSONField(default=dict, blank=True, help_text="{code, message, field} of a refused record")
    added_lines = models.IntegerField(default=0)
    ai_lines = models.IntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ScopedManager(project="project")

    def __str__(self) -> str:
        return f"attribution of {self.session_id} ({self.ai_lines}/{self.added_lines} by the agent)"


class ShareLink(models.Model):
    """A read-only, expiring, revocable link to one session for someone without an account.

    Only a SHA-256 of the token is kept; the link is shown once, when it is created.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="+")
    token_hash = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ScopedManager(project="project")

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["project", "-created_at"], name="sharelink_project_recent")]

    def __str__(self) -> str:
        return f"share link to {self.session_id} until {self.expires_at:%Y-%m-%d}"

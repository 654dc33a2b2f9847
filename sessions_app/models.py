"""A captured session: one segment of an agent's conversation, linked to a commit or a task.

Metadata lives here; the conversation bytes live in object storage under keys that contain no
user-controlled text (see ``sessions_app.blobs``).
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import Q, Value
from django.db.models.functions import Now
from django.utils import timezone

from projects.managers import ProjectScopedManager
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
UPLOAD_DELAY_SHOWN = timedelta(hours=1)


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
    # The context digest's text of this session, rendered by the worker (sessions_app.context.context_texts,
    # docs/design.md §6): what a digest joins per session without decoding ``digest``. NULL on rows
    # processed before it existed (the digest renders those itself; ``reprocess`` fills them).
    context_text = models.JSONField(
        null=True, blank=True, editable=False, help_text="[format, block text per detail level…, short block text]"
    )
    message_uuids = ArrayField(
        models.UUIDField(),
        default=list,
        db_default=Value([], output_field=ArrayField(models.UUIDField())),  # rows written by SQL (bench seeding)
        blank=True,
        help_text="the uuids of the conversation's messages, for the short message permalink /p/{project}/m/{uuid}",
    )
    commit_message = models.TextField(blank=True, default="")
    patch_id = models.CharField(max_length=40, blank=True, default="")
    diff_stat = models.JSONField(default=dict, blank=True)
    redaction = models.JSONField(default=dict, blank=True)
    server_redaction = models.JSONField(
        default=dict, blank=True, help_text="secrets the server's second wall redacted, per rule kind"
    )
    idempotency_key = models.CharField(max_length=200, null=True, blank=True)
    search_vector = SearchVectorField(null=True, editable=False)
    search_text = models.TextField(
        blank=True,
        default="",
        db_default="",
        editable=False,
        help_text="bounded lines of the searched text, for snippets",
    )
    created_at = models.DateTimeField(auto_now_add=True, help_text="upload time")
    # The session's date (docs/scaling.md "Dates"): when its conversation happened, as the client
    # says (the segment's last message), else the upload time; never later than the upload.
    captured_at = models.DateTimeField(default=timezone.now, db_default=Now())
    processed_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    # Hostile-input guards (sessions_app.ingest, sessions_app.tasks): a re-upload of the same
    # offsets with other bytes is a conflict; a session that keeps killing workers is given up.
    raw_sha256 = models.CharField(max_length=64, blank=True, default="", help_text="of the decompressed transcript")
    processing_attempts = models.PositiveSmallIntegerField(default=0)

    objects = ProjectScopedManager()

    class Meta:
        ordering = ["-captured_at", "-id"]
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
            models.Index(fields=["project", "-captured_at", "-id"], name="session_project_recent"),
            models.Index(fields=["project", "feature_branch", "-captured_at", "-id"], name="session_branch_recent"),
            models.Index(
                fields=["project", "commit_hash"], name="session_commit", opclasses=["", "varchar_pattern_ops"]
            ),
            models.Index(fields=["project", "task_id"], name="session_task"),
            models.Index(fields=["author", "-captured_at"], name="session_author_recent"),
            models.Index(fields=["project", "agent_session_id", "end_offset"], name="session_agent_segment"),
            models.Index(fields=["status", "created_at"], name="session_status_age"),
            GinIndex(fields=["search_vector"], name="session_search"),
            GinIndex(fields=["files_touched"], name="session_files"),
            GinIndex(fields=["message_uuids"], name="session_message_uuids"),
            # Insights' exact median sizes: walk to the middle of the project's sizes in order (no sort).
            models.Index(
                fields=["project", "raw_size_bytes"],
                include=["status", "captured_at", "feature_branch"],
                name="session_raw_size",
            ),
            models.Index(
                fields=["project", "size_bytes"],
                include=["status", "captured_at", "feature_branch"],
                name="session_stored_size",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.commit_hash or self.task_id} ({self.status})"

    @property
    def uploaded_later(self) -> bool:
        """Uploaded well after it happened (``import``, an offline queue): pages then show both dates."""
        return self.created_at - self.captured_at > UPLOAD_DELAY_SHOWN

    @property
    def commit_subject(self) -> str:
        """The first line of the commit message (a reviewer's headline), or ''."""
        return next((line.strip() for line in (self.commit_message or "").splitlines() if line.strip()), "")[:200]

    @property
    def headline(self) -> str:
        """What a session is called on its page and in lists: a checkpoint's commit subject, else its title."""
        if self.kind == Kind.CHECKPOINT and self.commit_subject:
            return self.commit_subject
        if not self.title.strip() and self.kind in (Kind.END, Kind.CLEAR):
            # a segment with no prompt of its own (the agent kept working after the last commit)
            branch = self.feature_branch
            return f"{branch}: after the last commit" if branch else "The conversation after the last commit"
        return self.title

    @property
    def subheadline(self) -> str:
        """The line under the headline: the first prompt when the headline is the commit subject."""
        return self.title if self.headline != self.title else ""

    @property
    def ref(self) -> str:
        """What the session is about: the short commit, or the task id."""
        return self.task_id if self.kind == Kind.TASK and self.task_id else (self.commit_hash or "")[:12]


class TenantSession(models.Model):
    """The view ``sessions_app_session_tenant`` (migration ``0021``): the id and the GIN-indexed columns
    of the sessions of the project the transaction is scoped to, the policy's condition as its WHERE.

    It belongs to the table's owner, so PostgreSQL reads it without the policy (and without a
    superuser's LEAKPROOF marks): a search or files condition inside it is an index condition. Only
    ``sessions_app.selectors`` reads it, as ``id IN (…)`` of a scoped query that row-level security
    still filters (docs/scaling.md "Search under row-level security"). Outside a scope it is empty;
    the web role may only SELECT it."""

    id = models.UUIDField(primary_key=True)
    search_vector = SearchVectorField(null=True)
    files_touched = models.JSONField(default=list)
    message_uuids = ArrayField(models.UUIDField(), default=list)

    class Meta:
        managed = False
        db_table = "sessions_app_session_tenant"


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

    objects = ProjectScopedManager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "old_hash", "new_hash"], name="commitlink_unique")]
        indexes = [
            models.Index(fields=["project", "new_hash"], name="commitlink_new", opclasses=["", "varchar_pattern_ops"])
        ]

    def __str__(self) -> str:
        return f"{self.old_hash[:10]} → {self.new_hash[:10]}"


def this_hour() -> datetime:
    return timezone.now().replace(minute=0, second=0, microsecond=0)


class AccessLog(models.Model):
    """Who read which session's content, when, from where (pages, messages API, raw, MCP).

    One row per reader, session, way of reading (``via``) and hour, with how many reads it holds:
    filtering, paging and lazy loading do not each add a row (``sessions_app.audit.access_record``
    upserts). ``at`` is the latest read of the hour, ``ip``/``user_agent`` the latest seen.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    session_id = models.UUIDField(help_text="kept as a plain id so the record outlives a deleted session")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    at = models.DateTimeField(default=timezone.now, help_text="the latest read counted in this row")
    hour = models.DateTimeField(default=this_hour, help_text="the hour (UTC) the row's reads fall in")
    count = models.PositiveIntegerField(default=1, help_text="reads by this reader of this session in this hour")
    via = models.CharField(max_length=16)
    ip = models.GenericIPAddressField(null=True, blank=True)
    user_agent = models.CharField(max_length=300, blank=True, default="")

    objects = ProjectScopedManager()

    class Meta:
        ordering = ["-at"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "session_id", "user", "via", "hour"],
                name="accesslog_one_row_per_hour",
                nulls_distinct=False,
            )
        ]
        indexes = [
            models.Index(fields=["project", "-at"], name="accesslog_project_recent"),
            models.Index(fields=["session_id", "-at"], name="accesslog_session_recent"),
            models.Index(fields=["project", "user", "-at"], name="accesslog_project_user"),
        ]

    def __str__(self) -> str:
        return f"{self.user} read {self.session_id} via {self.via}"


class InsightsDay(models.Model):
    """One day's totals of one facet of a project's sessions, for insights (docs/design.md §5).

    Written only by the database: statement-level triggers on ``sessions_app_session`` (migration 0012;
    the facts function is 0006's) add the facts of a statement's sessions when they are counted
    (status final and not failed), by the UTC day of ``captured_at``, and take them away when they
    change or are deleted, once per statement (bulk inserts stay cheap). The insights page sums a
    few hundred rows per chart instead of every session (and never unpacks a digest). ``branch`` is
    ``""`` for the whole project and a branch name for that branch's own copy. Facets and what
    ``sessions``/``a``/``b`` hold:

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


class BlobDeletion(models.Model):
    """A blob whose session row is gone and which object storage has not yet confirmed deleted.

    Written in the same transaction that deletes the row (``sessions_app.services.session_delete``),
    removed once storage confirms; the hourly retention task retries what is left. So a row never
    points at a missing blob, and a blob whose row is gone is never forgotten (storage down during a
    delete). Keys hold ids only; this table is internal and read by no view.
    """

    key = models.CharField(max_length=512, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    attempts = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return self.key


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

    objects = ProjectScopedManager()

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

    objects = ProjectScopedManager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["project", "-created_at"], name="sharelink_project_recent")]

    def __str__(self) -> str:
        return f"share link to {self.session_id} until {self.expires_at:%Y-%m-%d}"


class PartialUpload(models.Model):
    """An upload sent in parts that survives a cut link (docs/api.md "Resumable uploads").

    The client declares the whole request body (the same multipart form ``POST …/sessions``
    takes) by size and SHA-256, sends it in ``part_size`` pieces stored as blobs under
    ``uploads/``, then finishes it: the parts are joined, checked against the declared digest and
    ingested like one request. ``parts`` maps a part's index to its SHA-256, so a re-sent part
    changes nothing and a different one is refused. One per (project, author, idempotency key);
    ``session`` is set once finished, so a repeated finish answers the same session.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    idempotency_key = models.CharField(max_length=200)
    size = models.BigIntegerField()
    sha256 = models.CharField(max_length=64)
    content_type = models.CharField(max_length=200)
    part_size = models.IntegerField()
    parts = models.JSONField(default=dict, blank=True)
    session = models.ForeignKey(Session, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    finished_status = models.IntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ProjectScopedManager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "author", "idempotency_key"], name="partialupload_one_per_key"),
        ]

    def __str__(self) -> str:
        return f"upload {self.pk}: {len(self.parts)} part(s) of {self.size} bytes"

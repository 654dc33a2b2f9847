"""The tenant (Project) and who may do what in it.

Tenant-owned models use ``ProjectScopedManager`` (projects.managers): querying them without an active project scope
raises, so a forgotten filter is an error instead of a data leak.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, BaseUserManager, PermissionsMixin
from django.db import models
from django.db.models.functions import Lower
from django.utils import timezone

from projects.managers import ProjectScopedManager


class UserManager(BaseUserManager["User"]):
    use_in_migrations = True

    def create_user(self, email: str, password: str | None = None, **extra: object) -> User:
        if not email:
            raise ValueError("An e-mail address is required")
        user = self.model(email=self.normalize_email(email).lower(), **extra)
        user.set_password(password) if password else user.set_unusable_password()
        user.save(using=self._db)
        return user

    def create_superuser(self, email: str, password: str | None = None, **extra: object) -> User:
        extra.update(is_staff=True, is_superuser=True)
        return self.create_user(email, password, **extra)


class User(AbstractBaseUser, PermissionsMixin):
    """A person; identified by e-mail (no usernames)."""

    email = models.EmailField(unique=True)
    name = models.CharField(max_length=150, blank=True)
    is_active = models.BooleanField(default=True)
    is_staff = models.BooleanField(default=False)
    date_joined = models.DateTimeField(default=timezone.now)
    # SCIM (governance/scim): the identity provider's own key for the person, and its userName when
    # that is not the sign-in address (an Entra UPN); null = the e-mail is the userName.
    external_id = models.CharField(max_length=255, null=True, blank=True, unique=True)
    scim_user_name = models.CharField(max_length=254, null=True, blank=True)
    break_glass = models.BooleanField(  # db_default: rows written by an older release's code stay valid
        default=False,
        db_default=False,
        help_text="an emergency account SCIM may never deactivate or delete (docs/identity.md)",
    )

    objects = UserManager()
    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"

    class Meta:
        constraints = [
            models.UniqueConstraint(Lower("scim_user_name"), name="user_scim_user_name_unique"),
        ]

    def __str__(self) -> str:
        return self.email


class Role(models.TextChoices):
    VIEWER = "viewer", "Viewer"
    MEMBER = "member", "Member"
    ADMIN = "admin", "Admin"


ROLE_RANK = {Role.VIEWER: 0, Role.MEMBER: 1, Role.ADMIN: 2}


def role_at_least(role: str, required: str) -> bool:
    return ROLE_RANK[Role(role)] >= ROLE_RANK[Role(required)]


class Project(models.Model):
    """The tenant: one repository and its members."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    repo = models.CharField(max_length=255, unique=True, null=True, blank=True, help_text="host/owner/name")
    retention_days = models.PositiveIntegerField(null=True, blank=True)
    sharing_enabled = models.BooleanField(
        default=True, help_text="members may create read-only share links to single sessions (docs/attribution.md)"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    archived_at = models.DateTimeField(
        null=True, blank=True, help_text='archived: read-only, uploads refused (docs/security.md "Admin API")'
    )
    # Set by staff only (manage.py project_policy): a project admin could otherwise shorten the record
    # of their own actions, or lift the hold that keeps it (docs/security.md "Audit retention and
    # legal hold").
    audit_retention_days = models.PositiveIntegerField(
        null=True, blank=True, help_text="days this project's audit events are kept; empty: SESSIONLEDGER_AUDIT_DAYS"
    )
    legal_hold_since = models.DateTimeField(
        null=True, blank=True, help_text="under legal hold: no retention, no erasure of its members"
    )
    legal_hold_reason = models.CharField(max_length=300, blank=True, default="")

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class Membership(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ProjectScopedManager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "user"], name="membership_unique_user")]
        ordering = ["user__email"]

    def __str__(self) -> str:
        return f"{self.user} in {self.project} ({self.role})"


class Invitation(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    token = models.CharField(max_length=64, unique=True)
    invited_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ProjectScopedManager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.email} → {self.project}"

    @property
    def is_open(self) -> bool:
        return self.accepted_at is None and self.revoked_at is None and self.expires_at > timezone.now()


class Scope(models.TextChoices):
    READ = "read", "Read"
    WRITE = "write", "Write"


class ApiToken(models.Model):
    """A personal API token. Only the SHA-256 of the secret is stored; the secret is shown once."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, help_text="first characters of the secret, to recognise it")
    secret_hash = models.CharField(max_length=64, unique=True)
    project = models.ForeignKey(Project, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    scopes = models.JSONField(default=list)
    parent = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="children",
        help_text="the token this one was created with through the API; revoking it revokes this one",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        expired = self.expires_at is not None and self.expires_at <= timezone.now()
        return self.revoked_at is None and not expired


class DeviceGrant(models.Model):
    """A pending ``sessionledger login``: the CLI polls with the device code while the user
    approves the short user code in the browser. The token is minted at the first poll after
    approval, so no secret is ever stored.

    Everything the requester sent (client name, project, scopes) and where it came from (address,
    user agent) is kept to be shown, as unverified claims, on the approval page."""

    device_code_hash = models.CharField(max_length=64, unique=True)
    user_code = models.CharField(max_length=9, unique=True)
    client_name = models.CharField(max_length=200, blank=True, default="")
    requested_project = models.CharField(max_length=64, blank=True, default="", help_text="slug, as requested")
    scopes = models.JSONField(default=list)
    requested_ip = models.GenericIPAddressField(null=True, blank=True)
    requested_user_agent = models.CharField(max_length=300, blank=True, default="")
    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.CASCADE, related_name="+", help_text="set at approval"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    denied_at = models.DateTimeField(null=True, blank=True)
    consumed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"device login {self.user_code}"


class AuditEvent(models.Model):
    """One administrative event (docs/security.md "Audit trail"): who did what to which target, when
    and from where. Append-only for the web role (migration ``projects/0006``: row-level security
    allows SELECT and INSERT of the scoped project's rows, and the role has no UPDATE or DELETE).

    ``project_id`` and ``actor_id`` are plain values, not foreign keys: an event outlives the
    project and the person it names, and no cascade ever rewrites it. ``detail`` never holds a
    secret (token secrets, share and invitation tokens are never passed to it)."""

    at = models.DateTimeField(default=timezone.now, db_index=True)
    project_id = models.UUIDField(null=True, blank=True, db_index=True)
    project_slug = models.CharField(max_length=64, blank=True, default="")
    actor_id = models.BigIntegerField(null=True, blank=True)
    actor_email = models.CharField(max_length=254, blank=True, default="", help_text="empty: the system")
    kind = models.CharField(max_length=64)
    target = models.CharField(max_length=300, blank=True, default="")
    detail = models.JSONField(default=dict, blank=True)
    via = models.CharField(max_length=16, default="web", help_text="web, api, scim, admin, command, system")
    ip = models.GenericIPAddressField(null=True, blank=True)
    user_agent = models.CharField(max_length=300, blank=True, default="")

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["project_id", "-at"], name="auditevent_project_at")]

    def __str__(self) -> str:
        return f"{self.kind} {self.target} by {self.actor_email or 'system'}"

from __future__ import annotations

from django.conf import settings
from rest_framework import serializers

from projects.models import ApiToken, Invitation, Membership, Project, Role, Scope


class UserRefSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    email = serializers.EmailField(read_only=True)


class ProjectSerializer(serializers.ModelSerializer):
    web_url = serializers.SerializerMethodField()

    class Meta:
        model = Project
        fields = ["id", "slug", "name", "repo", "retention_days", "created_at", "archived_at", "web_url"]

    def get_web_url(self, project: Project) -> str:
        return f"{settings.SITE_URL}/p/{project.slug}/"


class ProjectUpdateSerializer(serializers.ModelSerializer):
    """What an admin may change: the name and how long sessions are kept (empty = forever)."""

    retention_days = serializers.IntegerField(min_value=1, max_value=36500, allow_null=True, required=False)
    archived = serializers.BooleanField(required=False, help_text="archive (read-only, no uploads) or unarchive")

    class Meta:
        model = Project
        fields = ["name", "retention_days", "archived"]


class ProjectCreateSerializer(serializers.Serializer[dict[str, object]]):
    """A new project (staff): its first admin is ``admin`` (an e-mail address), else the caller."""

    slug = serializers.CharField(max_length=64)
    name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    repo = serializers.CharField(max_length=255, required=False, allow_null=True, default=None)
    admin = serializers.EmailField(required=False, allow_null=True, default=None)


class MembershipSerializer(serializers.ModelSerializer):
    user = UserRefSerializer(read_only=True)

    class Meta:
        model = Membership
        fields = ["id", "user", "role", "created_at"]


class MembershipCreateSerializer(serializers.Serializer):
    email = serializers.EmailField()
    role = serializers.ChoiceField(choices=Role.choices, default=Role.MEMBER)


class MembershipUpdateSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices)


class InvitationSerializer(serializers.ModelSerializer):
    invited_by = UserRefSerializer(read_only=True)
    url = serializers.SerializerMethodField()

    class Meta:
        model = Invitation
        fields = ["id", "email", "role", "invited_by", "created_at", "expires_at", "accepted_at", "revoked_at", "url"]

    def get_url(self, invitation: Invitation) -> str:
        return f"{settings.SITE_URL}/invitations/{invitation.token}/"


class InvitationCreateSerializer(serializers.Serializer):
    email = serializers.EmailField()
    role = serializers.ChoiceField(choices=Role.choices, default=Role.MEMBER)


class ApiTokenSerializer(serializers.ModelSerializer):
    project: serializers.SlugRelatedField[Project] = serializers.SlugRelatedField(
        slug_field="slug", read_only=True, allow_null=True
    )

    class Meta:
        model = ApiToken
        fields = ["id", "name", "prefix", "project", "scopes", "created_at", "expires_at", "last_used_at", "revoked_at"]


class ApiTokenCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    project = serializers.SlugField(required=False, allow_null=True, default=None)
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=Scope.choices),
        required=False,
        allow_empty=False,
        help_text="default: read and write — or, created with a token, that token's scopes (never more)",
    )
    expires_days = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=3650,
        help_text="default: never — or, created with an expiring token, that token's expiry (never later)",
    )


class ApiTokenCreatedSerializer(ApiTokenSerializer):
    secret = serializers.CharField(read_only=True, help_text="Shown once; store it now.")

    class Meta(ApiTokenSerializer.Meta):
        fields = [*ApiTokenSerializer.Meta.fields, "secret"]

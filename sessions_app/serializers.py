from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone
from rest_framework import serializers

from sessions_app.links import session_api_url, session_web_url
from sessions_app.models import FINAL_TASK_STATUSES, Kind, Session

HEX40 = re.compile(r"^[0-9a-f]{40}$")


class DiffStatSerializer(serializers.Serializer):
    files = serializers.IntegerField(min_value=0, default=0)
    insertions = serializers.IntegerField(min_value=0, default=0)
    deletions = serializers.IntegerField(min_value=0, default=0)


class SubagentOffsetsSerializer(serializers.Serializer):
    agent_id = serializers.CharField(max_length=100)
    start_offset = serializers.IntegerField(min_value=0, required=False, allow_null=True)
    end_offset = serializers.IntegerField(min_value=0, required=False, allow_null=True)


def _commit(**kwargs: object) -> serializers.RegexField:
    return serializers.RegexField(
        HEX40,
        required=False,
        allow_null=True,
        error_messages={"invalid": "must be a full 40-character lowercase hex commit hash"},
        **kwargs,
    )


class IngestMetadataSerializer(serializers.Serializer):
    """The ``metadata`` part of an upload (SPEC §3)."""

    kind = serializers.ChoiceField(choices=Kind.choices, default=Kind.CHECKPOINT)
    feature_branch = serializers.CharField(max_length=255, allow_blank=True, default="")
    commit_hash = _commit()
    task_id = serializers.CharField(max_length=100, required=False, allow_null=True)
    status = serializers.ChoiceField(choices=[s.value for s in FINAL_TASK_STATUSES], required=False, allow_null=True)
    amends = _commit()
    agent = serializers.CharField(max_length=32, default="claude-code")
    agent_version = serializers.CharField(max_length=32, allow_blank=True, default="")
    agent_session_id = serializers.CharField(max_length=100, allow_blank=True, default="")
    start_offset = serializers.IntegerField(min_value=0, required=False, allow_null=True)
    end_offset = serializers.IntegerField(min_value=0, required=False, allow_null=True)
    previous_end_offset = serializers.IntegerField(min_value=0, required=False, allow_null=True)
    commit_message = serializers.CharField(allow_blank=True, default="", trim_whitespace=False, max_length=100_000)
    patch_id = serializers.RegexField(r"^[0-9a-f]{40}$", required=False, allow_blank=True, default="")
    diff_stat = DiffStatSerializer(required=False)
    files_touched = serializers.ListField(child=serializers.CharField(max_length=1024), default=list, max_length=10_000)
    captured_at = serializers.DateTimeField(required=False, allow_null=True)
    redaction = serializers.DictField(child=serializers.IntegerField(min_value=0), default=dict)
    subagents = SubagentOffsetsSerializer(many=True, required=False, default=list)

    def validate_agent(self, value: str) -> str:
        from sessionledger.formats import get_format

        try:
            get_format(value)
        except ValueError:
            raise serializers.ValidationError(f"unknown agent format {value!r}") from None
        return value

    def validate(self, attrs: dict) -> dict:
        if attrs["kind"] == Kind.TASK and not attrs.get("task_id"):
            raise serializers.ValidationError({"task_id": "a task session needs task_id"})
        if attrs["kind"] != Kind.TASK and not attrs.get("commit_hash"):
            raise serializers.ValidationError({"commit_hash": f"a {attrs['kind']} session needs commit_hash"})
        if attrs.get("status") and attrs["kind"] != Kind.TASK:
            raise serializers.ValidationError({"status": "only task sessions carry a status"})
        return attrs


class AuthorSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    email = serializers.EmailField()


_PLAIN_FIELDS = (
    "kind",
    "feature_branch",
    "commit_hash",
    "task_id",
    "amends",
    "status",
    "message_count",
    "turn_count",
    "size_bytes",
    "raw_size_bytes",
    "title",
    "summary",
    "agent",
    "agent_version",
    "agent_session_id",
    "start_offset",
    "end_offset",
    "commit_message",
    "files_touched",
    "diff_stat",
    "patch_id",
    "redaction",
    "error",
)


class SessionSerializer(serializers.ModelSerializer):
    project = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    author = AuthorSerializer(read_only=True, allow_null=True)
    url = serializers.SerializerMethodField()
    web_url = serializers.SerializerMethodField()

    class Meta:
        model = Session
        fields = [
            "id",
            "project",
            "author",
            *_PLAIN_FIELDS,
            "created_at",
            "captured_at",
            "processed_at",
            "url",
            "web_url",
        ]
        read_only_fields = fields

    def get_url(self, session: Session) -> str:
        return session_api_url(session)

    def get_web_url(self, session: Session) -> str:
        return session_web_url(session)

    def to_representation(self, session: Session) -> dict[str, Any]:
        return session_representation(session_row(session), session.project.slug)


ROW_COLUMNS = ("id", *_PLAIN_FIELDS, "author_id", "author__email", "created_at", "captured_at", "processed_at")


def session_row(session: Session) -> dict[str, Any]:
    """A model instance as the row ``QuerySet.values(*ROW_COLUMNS)`` would give."""
    row = {name: getattr(session, name) for name in ROW_COLUMNS if "__" not in name}
    row["author__email"] = session.author.email if session.author else None
    return row


def session_representation(row: dict[str, Any], project_slug: str) -> dict[str, Any]:
    """A session as the API shows it, from a values() row.

    Equal to DRF's generic ModelSerializer output (a test holds them equal) but built directly:
    list pages show up to 200 sessions and model instances plus the generic field machinery were
    most of their time.
    """
    data = {name: row[name] for name in _PLAIN_FIELDS}
    url = f"{settings.SITE_URL}/api/v1/projects/{project_slug}/sessions/{row['id']}"
    data.update(
        id=str(row["id"]),
        project=project_slug,
        url=url,
        web_url=f"{settings.SITE_URL}/p/{project_slug}/s/{row['id']}",
        author={"id": row["author_id"], "email": row["author__email"]} if row["author_id"] else None,
        created_at=_iso(row["created_at"]),
        captured_at=_iso(row["captured_at"]),
        processed_at=_iso(row["processed_at"]),
    )
    return {name: data[name] for name in SessionSerializer.Meta.fields}


def _iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    text = timezone.localtime(value).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


class SessionDetailSerializer(SessionSerializer):
    links = serializers.SerializerMethodField()

    class Meta(SessionSerializer.Meta):
        fields = [*SessionSerializer.Meta.fields, "links"]

    def to_representation(self, session: Session) -> dict[str, Any]:
        return {**super().to_representation(session), "links": self.get_links(session)}

    def get_links(self, session: Session) -> dict[str, str | None]:
        base = session_api_url(session)
        previous = session.previous
        return {
            "messages": f"{base}/messages",
            "raw": f"{base}/raw",
            "previous": session_api_url(previous) if previous else None,
        }


class IngestAcceptedSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    status = serializers.CharField()
    url = serializers.URLField()
    web_url = serializers.URLField()


class ErrorSerializer(serializers.Serializer):
    """``{"error": {"code", "message", "field"}}``"""

    error = serializers.DictField()


class MessageSerializer(serializers.Serializer):
    """A message of the normalised content document (SPEC §2), returned as stored."""

    index = serializers.IntegerField()
    uuid = serializers.CharField(allow_null=True)
    role = serializers.CharField()
    kind = serializers.CharField()
    timestamp = serializers.CharField(allow_null=True)
    content = serializers.CharField(allow_blank=True)
    tool = serializers.DictField(required=False)
    sidechain = serializers.BooleanField(required=False)

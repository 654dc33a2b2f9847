from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone
from django_scopes import scope
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from projects.models import Project
from sessions_app import parts
from sessions_app.links import session_api_url, session_web_url
from sessions_app.models import FINAL_TASK_STATUSES, Attribution, Kind, Session
from sessions_app.validation import CONTROL, MAX_DB_INT, no_control_characters

HEX40 = re.compile(r"^[0-9a-f]{40}$")


# Caps on every list and dict of the metadata (docs/api.md, "Limits"); the whole part is also
# capped in bytes (SESSIONLEDGER_MAX_METADATA_BYTES) before it is parsed.
MAX_FILES_TOUCHED, MAX_PATH_CHARS = 10_000, 1024
MAX_REDACTION_RULES, MAX_RULE_CHARS = 100, 64
MAX_SUBAGENTS = 100  # Django's default cap on file parts in one request is 100 too
IDENTIFIER = [no_control_characters]


def _count(**kwargs: Any) -> serializers.IntegerField:
    return serializers.IntegerField(min_value=0, max_value=MAX_DB_INT, **kwargs)


class DiffStatSerializer(serializers.Serializer):
    files = _count(default=0)
    insertions = _count(default=0)
    deletions = _count(default=0)


class SubagentOffsetsSerializer(serializers.Serializer):
    agent_id = serializers.CharField(max_length=100, validators=IDENTIFIER)
    start_offset = _count(required=False, allow_null=True)
    end_offset = _count(required=False, allow_null=True)
    path = serializers.RegexField(parts.SUBAGENT_PATH_PATTERN, required=False)  # its layout (sessions_app.parts)


class ToolResultMetaSerializer(serializers.Serializer):
    name = serializers.RegexField(parts.NAME_PATTERN)
    bytes = _count(required=False)
    truncated_bytes = _count(required=False)


class RedactionField(serializers.DictField):
    """Counts per redaction rule: ``{"github_token": 2}``; a bounded number of short rule names."""

    child = _count()

    def to_internal_value(self, data: Any) -> dict[str, int]:
        if isinstance(data, dict) and len(data) > MAX_REDACTION_RULES:
            raise serializers.ValidationError(f"at most {MAX_REDACTION_RULES} redaction rules")
        if isinstance(data, dict):
            for key in data:
                if len(str(key)) > MAX_RULE_CHARS or CONTROL.search(str(key)):
                    raise serializers.ValidationError(
                        f"a rule name is at most {MAX_RULE_CHARS} characters, without control characters"
                    )
        return super().to_internal_value(data)


def _commit(**kwargs: Any) -> serializers.RegexField:
    return serializers.RegexField(
        HEX40,
        required=False,
        allow_null=True,
        error_messages={"invalid": "must be a full 40-character lowercase hex commit hash"},
        **kwargs,
    )


class IngestMetadataSerializer(serializers.Serializer):
    """The ``metadata`` part of an upload (docs/api.md)."""

    kind = serializers.ChoiceField(choices=Kind.choices, default=Kind.CHECKPOINT)
    feature_branch = serializers.CharField(max_length=255, allow_blank=True, default="", validators=IDENTIFIER)
    commit_hash = _commit()
    task_id = serializers.CharField(max_length=100, required=False, allow_null=True, validators=IDENTIFIER)
    status = serializers.ChoiceField(choices=[s.value for s in FINAL_TASK_STATUSES], required=False, allow_null=True)
    amends = _commit()
    agent = serializers.CharField(max_length=32, default="claude-code", validators=IDENTIFIER)
    agent_version = serializers.CharField(max_length=32, allow_blank=True, default="", validators=IDENTIFIER)
    agent_session_id = serializers.CharField(max_length=100, allow_blank=True, default="", validators=IDENTIFIER)
    start_offset = _count(required=False, allow_null=True)
    end_offset = _count(required=False, allow_null=True)
    previous_end_offset = _count(required=False, allow_null=True)
    commit_message = serializers.CharField(allow_blank=True, default="", trim_whitespace=False, max_length=100_000)
    patch_id = serializers.RegexField(r"^[0-9a-f]{40}$", required=False, allow_blank=True, default="")
    diff_stat = DiffStatSerializer(required=False)
    files_touched = serializers.ListField(
        child=serializers.CharField(max_length=MAX_PATH_CHARS),  # git allows newlines in paths; NUL is refused
        default=list,
        max_length=MAX_FILES_TOUCHED,
    )
    captured_at = serializers.DateTimeField(required=False, allow_null=True)
    redaction = RedactionField(default=dict)
    subagents = serializers.ListField(
        child=SubagentOffsetsSerializer(), required=False, default=list, max_length=MAX_SUBAGENTS
    )
    tool_results = ToolResultMetaSerializer(  # type: ignore[call-arg]  # many=True: ListSerializer's max_length
        many=True, required=False, default=list, max_length=parts.MAX_TOOL_RESULTS
    )

    def validate_agent(self, value: str) -> str:
        from sessionledger.core.formats import get_format

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
    "diff_stat",
    "patch_id",
    "redaction",
    "error",
)
# Only a single session shows these: a list of 200 sessions carrying up to 10,000 paths and a long
# commit message each was tens of megabytes (docs/api.md, "Limits").
_DETAIL_ONLY_FIELDS = ("commit_message", "files_touched", "server_redaction")


class SessionSerializer(serializers.ModelSerializer):
    project: serializers.SlugRelatedField[Project] = serializers.SlugRelatedField(slug_field="slug", read_only=True)
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
DETAIL_COLUMNS = (*ROW_COLUMNS, *_DETAIL_ONLY_FIELDS)


def session_row(session: Session, columns: tuple[str, ...] = ROW_COLUMNS) -> dict[str, Any]:
    """A model instance as the row ``QuerySet.values(*columns)`` would give."""
    row = {name: getattr(session, name) for name in columns if "__" not in name}
    row["author__email"] = session.author.email if session.author else None
    return row


def session_representation(row: dict[str, Any], project_slug: str, fields: list[str] | None = None) -> dict[str, Any]:
    """A session as the API shows it, from a values() row.

    Equal to DRF's generic ModelSerializer output (a test holds them equal) but built directly:
    list pages show up to 200 sessions and model instances plus the generic field machinery were
    most of their time.
    """
    data = {name: row[name] for name in (*_PLAIN_FIELDS, *_DETAIL_ONLY_FIELDS) if name in row}
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
    return {name: data[name] for name in fields or SessionSerializer.Meta.fields}


def _iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    text = timezone.localtime(value).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


class AttributionStateSerializer(serializers.Serializer):
    status = serializers.ChoiceField(["stored", "refused", "none"])
    error = serializers.DictField(allow_null=True, help_text="{code, message, field} of a refused record")


class SessionDetailSerializer(SessionSerializer):
    links = serializers.SerializerMethodField()
    attribution = serializers.SerializerMethodField()

    class Meta(SessionSerializer.Meta):
        fields = [*SessionSerializer.Meta.fields, *_DETAIL_ONLY_FIELDS, "links", "attribution"]

    def to_representation(self, session: Session) -> dict[str, Any]:
        row = session_row(session, DETAIL_COLUMNS)
        fields = [name for name in self.Meta.fields if name not in ("links", "attribution")]
        return {
            **session_representation(row, session.project.slug, fields),
            "links": self.get_links(session),
            "attribution": self.get_attribution(session),
        }

    @extend_schema_field(AttributionStateSerializer)
    def get_attribution(self, session: Session) -> dict[str, Any]:
        """Whether the upload's attribution record was stored or refused (docs/attribution.md)."""
        with scope(project=session.project_id):  # the session's own tenant, whoever serializes it
            found = Attribution.objects.filter(project_id=session.project_id, session=session).first()
        if found is None:
            return {"status": "none", "error": None}
        return {"status": "stored" if found.record is not None else "refused", "error": found.error or None}

    def get_links(self, session: Session) -> dict[str, str | None]:
        base = session_api_url(session)
        previous = session.previous
        return {
            "messages": f"{base}/messages",
            "raw": f"{base}/raw",
            "attribution": f"{base}/attribution",
            "previous": session_api_url(previous) if previous else None,
        }


class IngestAcceptedSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    status = serializers.CharField()
    url = serializers.URLField()
    web_url = serializers.URLField()
    attribution = serializers.DictField(
        required=False, help_text="{status: stored|refused, error?: {code, message, field}} when the upload carried one"
    )


class ErrorSerializer(serializers.Serializer):
    """``{"error": {"code", "message", "field"}}``"""

    error = serializers.DictField()


class MessageSerializer(serializers.Serializer):
    """A message of the normalised content document (docs/api.md), returned as stored."""

    index = serializers.IntegerField()
    uuid = serializers.CharField(allow_null=True)
    role = serializers.CharField()
    kind = serializers.CharField()
    timestamp = serializers.CharField(allow_null=True)
    content = serializers.CharField(allow_blank=True)
    tool = serializers.DictField(required=False)
    sidechain = serializers.BooleanField(required=False)

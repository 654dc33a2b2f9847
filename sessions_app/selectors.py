"""Reads of sessions: the API and the pages both call these (never each other)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from django.contrib.postgres.search import SearchQuery
from django.db.models import QuerySet

from projects.errors import DomainError
from projects.models import Project
from sessions_app import blobs
from sessions_app.models import Session

COMMIT_PREFIX = re.compile(r"^[0-9a-fA-F]{7,40}$")


def session_queryset(*, project: Project) -> QuerySet[Session]:
    return Session.objects.filter(project=project).select_related("author", "project")


def commit_prefix(value: str) -> str:
    if not COMMIT_PREFIX.match(value or ""):
        raise DomainError("invalid", "A commit is 7 to 40 hexadecimal characters.", field="commit")
    return value.lower()


def session_search(queryset: QuerySet[Session], text: str) -> QuerySet[Session]:
    return queryset.filter(search_vector=SearchQuery(text, search_type="websearch", config="english"))


def sessions_for_commit(*, project: Project, sha: str) -> QuerySet[Session]:
    return session_queryset(project=project).filter(commit_hash__startswith=commit_prefix(sha))


def sessions_for_task(*, project: Project, task_id: str) -> QuerySet[Session]:
    return session_queryset(project=project).filter(task_id=task_id)


def session_get(*, project: Project, session_id: object) -> Session | None:
    try:
        return session_queryset(project=project).select_related("previous").filter(pk=session_id).first()
    except Exception:  # noqa: BLE001 - a malformed UUID is simply "no such session"
        return None


def session_next_segment(*, session: Session) -> Session | None:
    if not session.agent_session_id:
        return None
    return (Session.objects.filter(project_id=session.project_id, previous=session)
            .order_by("created_at").first())


def session_document(*, session: Session) -> dict[str, Any] | None:
    """The content document, or None while the session is still being processed."""
    if not session.content_storage_key:
        return None
    return blobs.load_json_gz(session.content_storage_key)


def filter_messages(messages: list[dict[str, Any]], *, roles: list[str] | None = None, kinds: list[str] | None = None,
                    since: datetime | None = None, until: datetime | None = None, text: str | None = None) -> list[dict]:
    """Role/kind/time/text filtering of normalised messages.

    Roles are the UI's buckets: ``thinking`` is its own role here, so hiding the assistant's
    replies and showing its thinking (or the reverse) are both possible.
    """
    needle = (text or "").casefold()

    def keep(message: dict[str, Any]) -> bool:
        return ((not roles or role_bucket(message) in roles)
                and (not kinds or message["kind"] in kinds)
                and _within(message_time(message), since, until)
                and (not needle or needle in (message.get("content") or "").casefold()))

    return [message for message in messages if keep(message)]


def role_bucket(message: dict[str, Any]) -> str:
    return "thinking" if message["kind"] == "thinking" else message["role"]


def message_time(message: dict[str, Any]) -> datetime | None:
    try:
        stamp = datetime.fromisoformat(message.get("timestamp") or "")
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


def _within(stamp: datetime | None, since: datetime | None, until: datetime | None) -> bool:
    if since is None and until is None:
        return True
    return stamp is not None and (since is None or stamp >= since) and (until is None or stamp <= until)

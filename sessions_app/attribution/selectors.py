"""Reads of attribution: a session's record, a commit's records (relinks followed), and the
fallback that attributes a commit from its stored transcripts when no record was uploaded."""

from __future__ import annotations

import copy
from typing import Any

from django.db.models import QuerySet

from projects.models import Project
from sessionledger.core import attribution, attribution_record
from sessions_app import selectors
from sessions_app.links import absolute_url, session_api_url, session_web_url
from sessions_app.models import Attribution, Session

MAX_MATCH_SESSIONS = 20
MAX_EARLIER_SEGMENTS = 5


def with_session(found: Attribution) -> dict[str, Any]:
    """The stored record with the session it belongs to under ``metadata["dev.sessionledger"]``."""
    record: dict[str, Any] = copy.deepcopy(found.record or {})
    for entry in record.get("files") or []:
        for conversation in entry.get("conversations") or []:
            if isinstance(conversation.get("url"), str):
                conversation["url"] = absolute_url(conversation["url"])
            for related in conversation.get("related") or []:
                if isinstance(related, dict) and isinstance(related.get("url"), str):
                    related["url"] = absolute_url(related["url"])
    vendor = record.setdefault("metadata", {}).setdefault(attribution.VENDOR, {})
    session = found.session
    vendor["session"] = {"id": str(session.pk), "url": session_api_url(session), "web_url": session_web_url(session)}
    return record


def attribution_of_session(*, session: Session) -> Attribution | None:
    return Attribution.objects.filter(project_id=session.project_id, session=session).first()


def attributions_for_commit(*, project: Project, sha: str) -> QuerySet[Attribution]:
    """Stored records of the commit's sessions, those reached through relinks included."""
    sessions = selectors.sessions_for_commit(project=project, sha=sha)
    return (
        Attribution.objects.filter(project=project, session__in=sessions.values("pk"), record__isnull=False)
        .select_related("session", "session__project")
        .order_by("session__captured_at", "created_at")
    )


def records_for_commit(*, project: Project, sha: str) -> list[dict[str, Any]]:
    return [with_session(found) for found in attributions_for_commit(project=project, sha=sha)]


def matched_record(
    *, project: Project, sha: str, added: dict[str, list[attribution.Line]], sessions: list[Session]
) -> dict[str, Any]:
    """An Agent Trace record of `sha` computed from the sessions' stored transcripts (not stored).

    For commits captured before attribution existed: the client sends the commit's added lines
    as hashes, and the same matching the client does at capture runs on the content documents.
    """
    steps: list[attribution.Step] = []
    moves: list[attribution.Move] = []
    owner_session: dict[str, Session] = {}
    for session in with_earlier_segments(sessions[:MAX_MATCH_SESSIONS]):
        document = selectors.session_document(session=session) or {}
        found = attribution.steps_from_messages(document.get("messages") or [])
        steps += found
        moves += attribution.moves_from_messages(document.get("messages") or [])
        owner_session.update({step.uuid: session for step in found})
    owners = attribution.attribute(added, steps, moves=moves)
    counts = {path: max((line.number for line in lines), default=0) for path, lines in added.items()}
    record = attribution_record.build_record(
        revision=sha, added=added, owners=owners, line_counts=counts, agent=_agent(sessions)
    )
    record = attribution_record.with_urls(record, _site(), project.slug)
    vendor = record["metadata"][attribution.VENDOR]
    vendor["source"] = "transcript"
    for uuid, facts in vendor["steps"].items():
        facts["session"] = str(owner_session[uuid].pk)
    return record


def with_earlier_segments(sessions: list[Session], depth: int = MAX_EARLIER_SEGMENTS) -> list[Session]:
    """The sessions preceded by the earlier segments of their conversations, oldest first: an
    edit made before the previous commit may only be committed now (as the client's capture
    reads the conversation from its start)."""
    ordered: list[Session] = []
    for session in sessions:
        chain: list[Session] = []
        current: Session | None = session
        while current is not None and len(chain) <= depth:
            chain.append(current)
            current = current.previous
        ordered += [s for s in reversed(chain) if s not in ordered]
    return ordered


def _agent(sessions: list[Session]) -> str:
    return sessions[0].agent if sessions else "claude-code"


def _site() -> str:
    from django.conf import settings

    return str(settings.SITE_URL)


def commit_sessions(*, project: Project, sha: str) -> list[Session]:
    return list(selectors.sessions_for_commit(project=project, sha=sha).order_by("captured_at", "created_at")[:100])

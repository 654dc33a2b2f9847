"""Reads of attribution: a session's record, a commit's records (relinks followed), and the
fallback that attributes a commit from its stored transcripts when no record was uploaded."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field
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


@dataclass
class LineTally:
    """Added lines by who wrote them: the agent, a human, or a contributor the record does not name
    as either (Agent Trace's ``mixed`` and ``unknown``)."""

    ai: int = 0
    human: int = 0
    unknown: int = 0

    @property
    def added(self) -> int:
        return self.ai + self.human + self.unknown

    def add(self, contributor: str, lines: int) -> None:
        name = contributor if contributor in ("ai", "human") else "unknown"
        setattr(self, name, getattr(self, name) + lines)


@dataclass
class AttributionSummary:
    """Several commits' records added up: their lines, the agent's lines per (agent, model), per file."""

    lines: LineTally = field(default_factory=LineTally)
    models: dict[tuple[str, str], int] = field(default_factory=dict)
    files: dict[str, LineTally] = field(default_factory=dict)
    records: int = 0

    def model_rows(self) -> list[tuple[str, str, int]]:
        """(agent, model, lines), most lines first."""
        return sorted(((a, m, n) for (a, m), n in self.models.items()), key=lambda row: (-row[2], row[0], row[1]))

    def agent_only_files(self) -> list[str]:
        """The files whose every added line the agent wrote: no human line among them (a reviewer's first read)."""
        return sorted(path for path, tally in self.files.items() if tally.ai and tally.ai == tally.added)


def attribution_summary(records: Iterable[tuple[str, Any]]) -> AttributionSummary:
    """The sum of records given as (agent, the record's ``files``): the ranges of each file's
    conversations counted by contributor, as ``validation.line_totals`` counts a record's lines."""
    summary = AttributionSummary()
    for agent, files in records:
        summary.records += 1
        for entry in files if isinstance(files, list) else []:
            tally = summary.files.setdefault(str(entry.get("path")), LineTally())
            for conversation in entry.get("conversations") or []:
                contributor = conversation.get("contributor") or {}
                lines = sum(span["end_line"] - span["start_line"] + 1 for span in conversation.get("ranges") or [])
                kind = str(contributor.get("type") or "unknown")
                tally.add(kind, lines)
                summary.lines.add(kind, lines)
                if kind == "ai":
                    key = (agent or "unknown agent", str(contributor.get("model_id") or "unknown model"))
                    summary.models[key] = summary.models.get(key, 0) + lines
    return summary


def summary_of_sessions(*, project: Project, sessions: QuerySet[Session]) -> AttributionSummary:
    """The summed records of these sessions, reading each record's files only (not its line hashes)."""
    rows = Attribution.objects.filter(project=project, session__in=sessions.values("pk"), record__isnull=False)
    return attribution_summary(rows.values_list("session__agent", "record__files"))

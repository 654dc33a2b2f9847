"""One agent session from its captured segments: the chain of segments and the stitched transcript.

Segments chain when each starts at the byte offset where the previous one ended (offsets are in
the developer's original transcript file). A missing range is a gap, reported explicitly: a
transcript with a hole in it would resume into a conversation that never happened. An agent
whose transcripts may be rewritten whole (Gemini CLI's `.json` chats, `TranscriptFormat.snapshots`) uploads
each capture as the whole file from offset 0: the newest such segment supersedes the earlier ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import Subquery

from projects.models import Project
from sessionledger.core.formats import DEFAULT_AGENT, cut_after_turn, cut_at_offset, get_format, step_line_end
from sessions_app import blobs, parts
from sessions_app.models import Kind, Session

UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
SHA_PREFIX = re.compile(r"^[0-9a-fA-F]{7,40}$")


class BadStep(ValueError):
    """`until` is neither a message uuid nor a commit hash (prefix of 7 or more)."""


class UnknownStep(LookupError):
    """`until` names no message of this agent session, nor a commit one of its segments holds."""


@dataclass(frozen=True)
class Gap:
    after: Session | None
    expected_start: int
    actual_start: int


@dataclass
class Chain:
    segments: list[Session]
    gaps: list[Gap] = field(default_factory=list)


def agent_session_chain(*, project: Project, agent_session_id: str) -> Chain:
    """Segments in offset order (duplicates of one range collapse to the earliest upload).

    Task sessions are left out when others exist: the client captures them as overlays (from
    the task's start mark, without moving the capture offset), so their bytes are also in the
    checkpoint, end or clear segments that partition the transcript; stitching both would
    repeat lines.
    """
    return _chain(project, agent_session_id)


def agent_session_chain_of(*, project: Project, session_id: Any) -> Chain:
    """The chain of the agent session that the session ``session_id`` is a segment of, in one query (the
    whole-conversation page's); no segments when there is no such session or it records no agent session."""
    try:
        key = Session._meta.get_field("id").to_python(session_id)
    except ValidationError:
        return Chain([])
    named = Session.objects.filter(project=project, pk=key).exclude(agent_session_id="")
    return _chain(project, Subquery(named.values("agent_session_id")[:1]))


def _chain(project: Project, agent_session_id: str | Subquery) -> Chain:
    rows = list(
        Session.objects.filter(project=project, agent_session_id=agent_session_id)
        .select_related("author", "project")
        .defer("search_vector", "search_text", "message_uuids", "context_text")  # megabytes for a long one
        .order_by("start_offset", "created_at")
    )
    if any(session.kind != Kind.TASK for session in rows):
        rows = [session for session in rows if session.kind != Kind.TASK]
    if rows and get_format(rows[0].agent).snapshots:
        rows = _after_last_snapshot(rows)
    segments: list[Session] = []
    for session in rows:
        if segments and (session.start_offset, session.end_offset) == (
            segments[-1].start_offset,
            segments[-1].end_offset,
        ):
            continue
        segments.append(session)
    return Chain(segments, _gaps(segments))


def _after_last_snapshot(rows: list[Session]) -> list[Session]:
    """The newest segment starting at 0 (a whole-file capture, in offset-then-upload order the
    last of those), and the segments after it."""
    starts = [i for i, session in enumerate(rows) if not session.start_offset]
    return rows[starts[-1] :] if starts else rows


def _gaps(segments: list[Session]) -> list[Gap]:
    gaps, expected, previous = [], 0, None
    for session in segments:
        start = session.start_offset or 0
        if start != expected:
            gaps.append(Gap(previous, expected, start))
        expected, previous = session.end_offset or start, session
    return gaps


def stitched_transcript(chain: Chain, *, until_turn: int | None = None, until: str | None = None) -> bytes:
    """The concatenated raw bytes of the chain, optionally cut after ``until_turn`` turns or
    after the step ``until`` (a message uuid, or a commit captured in one of the segments)."""
    raw = b"".join(blobs.gunzip(blobs.get(session.raw_storage_key)) for session in chain.segments)
    agent = chain.segments[0].agent if chain.segments else DEFAULT_AGENT  # no segment: empty bytes
    if until is not None:
        return cut_at_offset(raw, step_end(chain, raw, until), agent=agent)
    if until_turn is None:
        return raw
    return cut_after_turn(raw, until_turn, agent=agent)


def step_end(chain: Chain, raw: bytes, until: str) -> int:
    """Where the step ``until`` ends in the stitched bytes: after its message's line, or where
    the commit's segment ends (the checkpoint was captured there)."""
    value = until.strip()
    if UUID.match(value):
        end = step_line_end(raw, value.lower(), agent=chain.segments[0].agent) if chain.segments else None
        if end is None:
            raise UnknownStep(f"no message {value} in this agent session")
        return end
    if not SHA_PREFIX.match(value):
        raise BadStep("until is a message uuid or a commit hash (at least 7 hex characters)")
    position, candidates = 0, []
    for session in chain.segments:
        position += transcript_bytes(session)
        if (session.commit_hash or "").startswith(value.lower()):
            candidates.append((session.kind != Kind.CHECKPOINT, position))
    if not candidates:
        raise UnknownStep(f"no segment of this agent session was captured at commit {value}")
    return min(candidates)[1]  # the checkpoint that made the commit, else the first segment at it


# --- the files beside the transcript -------------------------------------------------------------


def files(chain: Chain) -> list[dict[str, Any]]:
    """Sub-agent transcripts and persisted tool outputs of the agent session, by relative path."""
    listed: dict[str, dict[str, Any]] = {}
    for session in chain.segments:
        for entry in parts.subagent_entries(session):
            path = entry.get("path") or f"subagents/agent-{entry['agent_id']}.jsonl"
            item = listed.setdefault(
                path, {"path": path, "kind": "subagent", "agent_id": entry["agent_id"], "bytes": 0}
            )
            item["bytes"] += int(entry.get("raw_size_bytes") or 0)
        for entry in parts.tool_result_entries(session):
            path = f"{parts.TOOL_RESULTS_DIR}/{entry['name']}"
            listed[path] = {"path": path, "kind": parts.TOOL_RESULT, "bytes": int(entry.get("raw_size_bytes") or 0)}
    return list(listed.values())


def file_bytes(chain: Chain, path: str) -> bytes | None:
    """One file of `files()`: a sub-agent's deltas joined in offset order, or a tool output."""
    if path.startswith(f"{parts.TOOL_RESULTS_DIR}/"):
        name = path[len(parts.TOOL_RESULTS_DIR) + 1 :]
        entries = [e for s in chain.segments for e in parts.tool_result_entries(s) if e["name"] == name]
        return blobs.gunzip(blobs.get(entries[-1]["key"])) if entries else None
    deltas = sorted(
        (e for s in chain.segments for e in parts.subagent_entries(s) if _subagent_path(e) == path),
        key=lambda e: int(e.get("start_offset") or 0),
    )
    if not deltas:
        return None
    pieces, ranges = [], set()
    for entry in deltas:
        span = (entry.get("start_offset"), entry.get("end_offset"))
        if span in ranges and span != (None, None):
            continue  # the same range uploaded twice (a retry under a new segment)
        ranges.add(span)
        pieces.append(blobs.gunzip(blobs.get(entry["key"])))
    return b"".join(pieces)


def _subagent_path(entry: dict[str, Any]) -> str:
    return str(entry.get("path") or f"subagents/agent-{entry['agent_id']}.jsonl")


def transcript_bytes(session: Session) -> int:
    """Size of the segment's main transcript part (`raw_size_bytes` also counts sub-agent parts):
    where the segment's bytes sit inside the stitched transcript."""
    return session.raw_size_bytes - sum(int(part.get("raw_size_bytes") or 0) for part in session.subagents or [])

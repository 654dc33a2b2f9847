"""One agent session from its captured segments: the chain of segments and the stitched transcript.

Segments chain when each starts at the byte offset where the previous one ended (offsets are in
the developer's original transcript file). A missing range is a gap, reported explicitly: a
transcript with a hole in it would resume into a conversation that never happened.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from projects.models import Project
from sessionledger.formats import cut_after_turn
from sessions_app import blobs
from sessions_app.models import Kind, Session


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
    rows = list(
        Session.objects.filter(project=project, agent_session_id=agent_session_id)
        .select_related("author", "project")
        .defer("search_vector")
        .order_by("start_offset", "created_at")
    )
    if any(session.kind != Kind.TASK for session in rows):
        rows = [session for session in rows if session.kind != Kind.TASK]
    segments: list[Session] = []
    for session in rows:
        if segments and (session.start_offset, session.end_offset) == (
            segments[-1].start_offset,
            segments[-1].end_offset,
        ):
            continue
        segments.append(session)
    return Chain(segments, _gaps(segments))


def _gaps(segments: list[Session]) -> list[Gap]:
    gaps, expected, previous = [], 0, None
    for session in segments:
        start = session.start_offset or 0
        if start != expected:
            gaps.append(Gap(previous, expected, start))
        expected, previous = session.end_offset or start, session
    return gaps


def stitched_transcript(chain: Chain, *, until_turn: int | None = None) -> bytes:
    """The concatenated raw bytes of the chain, optionally cut after ``until_turn`` turns."""
    raw = b"".join(blobs.gunzip(blobs.get(session.raw_storage_key)) for session in chain.segments)
    if until_turn is None:
        return raw
    agent = chain.segments[0].agent if chain.segments else "claude-code"
    return cut_after_turn(raw, until_turn, agent=agent)


def transcript_bytes(session: Session) -> int:
    """Size of the segment's main transcript part (`raw_size_bytes` also counts sub-agent parts):
    where the segment's bytes sit inside the stitched transcript."""
    return session.raw_size_bytes - sum(int(part.get("raw_size_bytes") or 0) for part in session.subagents or [])

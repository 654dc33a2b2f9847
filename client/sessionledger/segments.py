"""Turn "capture now" into a durable queue intent and an advanced offset, inside one state
transaction (docs/design.md §7 "Delta").

Only offsets are recorded here, never transcript bytes: the hook must exit in milliseconds even
after a 5 MB turn. The bytes stay in the agent's append-only file; the detached uploader reads
exactly [start, end) and re-checks a checksum of the last bytes before `end`, so a rewritten file
is noticed instead of uploaded. The one exception is a transcript its agent rewrites whole (Gemini
CLI's `.json` chats before v0.39, `agent.capture_mode` SNAPSHOT): byte offsets mean nothing
there, so each capture copies the whole file into the queue entry (`snapshot.json`) and uploads
it as a segment [0, size) that supersedes the earlier ones (docs/agents.md "Capture").

Checkpoint, end, clear and manual captures partition a transcript: each starts where the last
one ended and moves the offset. A task capture is an overlay: it spans from its `task start`
mark (or the last capture) to now, and does not move the offset, so the commit that follows a
`bd close` still gets the whole conversation behind it.
"""

from __future__ import annotations

import os
import time

from sessionledger import log, queue, transcripts
from sessionledger.core import claude_layout
from sessionledger.gitrefs import Repo
from sessionledger.intent import Intent, SubagentRange, TranscriptRecord
from sessionledger.state import Transaction

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing would slow every capture
if TYPE_CHECKING:
    from sessionledger.agents.base import Agent

SNAPSHOT_FILE = "snapshot.json"


class Request:
    """What to capture: the transcript, why (kind), and what it is linked to."""

    def __init__(
        self,
        transcript: str,
        kind: str,
        *,
        session_id: str | None = None,
        commit: str | None = None,
        previous_head: str | None = None,
        branch: str = "",
        repo: Repo | None = None,
        task_id: str | None = None,
        status: str | None = None,
        cwd: str | None = None,
        agent: Agent | None = None,
    ) -> None:
        self.transcript = transcript
        self.kind = kind
        # Claude Code's transcript needs no adapter: `claude_layout` answers what a capture asks
        # (the hook imports no adapter module, the larger part of a capture's imports).
        self._agent = agent if agent or claude_layout.is_transcript(transcript) else _adapter(transcript)
        self.agent_name = self._agent.name if self._agent else claude_layout.AGENT_NAME
        self.session_id = session_id or (
            self._agent.session_id(transcript) if self._agent else claude_layout.session_id(transcript)
        )
        self.commit = commit
        self.previous_head = previous_head
        self.branch = branch
        self.repo = repo
        self.task_id = task_id
        self.status = status
        self.cwd = cwd or os.getcwd()
        self.await_commit = False  # a task closed before the commit of its work (see `tasks`)
        # an `end` linked to a commit no hook captured (`checkpoint.claim_unseen_commit`): attributed
        self.attribute_commit = False

    def snapshot(self) -> bool:
        """Does the agent rewrite this transcript whole (`agent.capture_mode`)? Claude Code never does."""
        if self._agent is None:
            return False
        from sessionledger.agents.base import SNAPSHOT

        return self._agent.capture_mode(self.transcript) == SNAPSHOT

    def subagent_files(self) -> list[tuple[str, str]]:
        if self._agent is None:
            return claude_layout.subagent_files(self.transcript)
        return self._agent.subagent_files(self.transcript)


def _adapter(transcript: str) -> Agent:
    from sessionledger import agents

    return agents.for_transcript(transcript)


def capture(
    txn: Transaction, request: Request, *, start: int | None = None, sub_starts: dict[str, int] | None = None
) -> queue.Entry | None:
    """Queue the complete lines after the last capture (or after `start`); None when none."""
    if request.snapshot():
        return _capture_snapshot(txn, request)
    record = txn.transcript(request.transcript)
    overlay = start is not None
    begin = record["offset"] if start is None else start
    bounds = _bounds(request.transcript, begin, record)
    if bounds is None:
        return None
    begin, end, crc = bounds
    starts = record["subagents"] if sub_starts is None else sub_starts
    subagents = _subagent_deltas(request, starts)
    if end <= begin and not subagents:
        log.info(f"nothing new to capture in {request.transcript} after byte {begin} ({request.kind})")
        return None
    entry = queue.enqueue(_intent(request, begin, end, crc, subagents))
    if not overlay:
        _advance(record, request, end, subagents)
    log.info(f"queued {entry.describe()} {request.transcript} [{begin}, {end}) as {entry.id}")
    return entry


def _capture_snapshot(txn: Transaction, request: Request) -> queue.Entry | None:
    """The whole file, copied now (its agent rewrites it in place); None when unchanged."""
    from sessionledger.agents.base import SNAPSHOT

    record = txn.transcript(request.transcript)
    try:
        with open(request.transcript, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        log.warning(f"cannot read transcript {request.transcript}: {exc}")
        return None
    crc = transcripts.tail_crc_of(data)
    if not data or (record.get("offset") == len(data) and record.get("crc") == crc):
        log.info(f"nothing new to capture in {request.transcript} ({request.kind}, unchanged snapshot)")
        return None
    intent = _intent(request, 0, len(data), crc, [])
    intent.capture = SNAPSHOT
    entry = queue.enqueue(intent, {SNAPSHOT_FILE: data})
    record["offset"], record["crc"] = len(data), crc
    record["captured_at"], record["session_id"] = time.time(), request.session_id
    _remember_repo(record, request)
    log.info(f"queued {entry.describe()} {request.transcript} snapshot of {len(data)} bytes as {entry.id}")
    return entry


def _bounds(path: str, begin: int, record: TranscriptRecord) -> tuple[int, int, int] | None:
    """(start, end, crc); a transcript shorter than our offset was replaced: start over at 0."""
    try:
        end, crc = transcripts.complete_end(path, begin)
    except transcripts.TranscriptShrunk as exc:
        log.warning(f"{exc}; capturing it from the start")
        record["offset"], record["subagents"], begin = 0, {}, 0
        end, crc = transcripts.complete_end(path, 0)
    except OSError as exc:
        log.warning(f"cannot read transcript {path}: {exc}")
        return None
    return begin, end, crc


def _subagent_deltas(request: Request, starts: dict[str, int]) -> list[SubagentRange]:
    """Sub-agent files with complete lines after their own last offset."""
    deltas = []
    for agent_id, path in request.subagent_files():
        begin = int(starts.get(path, 0))
        try:
            end, crc = transcripts.complete_end(path, begin)
        except transcripts.TranscriptShrunk:
            begin = 0
            end, crc = transcripts.complete_end(path, 0)
        except OSError:
            continue
        if end > begin:
            deltas.append(SubagentRange(agent_id, path, begin, end, crc))
    return deltas


def _intent(request: Request, begin: int, end: int, crc: int, subagents: list[SubagentRange]) -> Intent:
    return Intent(
        kind=request.kind,
        agent=request.agent_name,
        agent_session_id=request.session_id,
        transcript=request.transcript,
        start_offset=begin,
        end_offset=end,
        crc=crc,
        subagents=subagents,
        commit_hash=request.commit,
        previous_head=request.previous_head,
        feature_branch=request.branch,
        task_id=request.task_id,
        status=request.status,
        repo=request.repo.worktree if request.repo else None,
        cwd=request.cwd,
        project=os.environ.get("SESSIONLEDGER_PROJECT") or None,
        captured_at=time.time(),
        await_commit=request.await_commit,
        attribute_commit=request.attribute_commit,
    )


def _advance(record: TranscriptRecord, request: Request, end: int, subagents: list[SubagentRange]) -> None:
    record["offset"], record["captured_at"], record["session_id"] = end, time.time(), request.session_id
    _remember_repo(record, request)
    for delta in subagents:
        record["subagents"][delta.path] = delta.end_offset


def _remember_repo(record: TranscriptRecord, request: Request) -> None:
    """Where the conversation commits: what its tail is linked to if no hook ends it (`tails`)."""
    if request.repo is not None:
        record["repo"] = request.repo.worktree


def sizes_now(transcript: str) -> tuple[int, dict[str, int]]:
    """Complete-line ends of a transcript and its sub-agents right now (a `task start` mark)."""
    end, _ = transcripts.complete_end(transcript, 0)
    subs = {}
    for _, path in _adapter(transcript).subagent_files(transcript):
        try:
            subs[path] = transcripts.complete_end(path, 0)[0]
        except OSError:
            continue
    return end, subs

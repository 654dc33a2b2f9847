"""A captured agent session as `turns`, `fork` and `restore` see it: its segments, its stitched
transcript, its turns and the checkpoint (commit) each turn ended at, and its steps — each
prompt, each commit captured inside a turn, each assistant tool call — with the code at each.

Turns are numbered on the stitched bytes with the same function the server cuts with
(the agent's `format.turn_starts` / `cut_after_turn`), so "turn 7" in `turns` is turn 7 in `fork --turn 7`
and in `…/transcript?until_turn=7`. Each segment's place in the stitched bytes comes from its
`transcript_bytes`; a segment ends where its commit was captured, so the checkpoint of turn N is
the commit of the last segment that ended before turn N did. The code at a step is likewise the
commit captured there or the nearest one before it, never one after (docs/client.md "Steps").
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Any

from sessionledger import agents, gitmeta
from sessionledger.agents.base import Agent
from sessionledger.api import ApiError, Client
from sessionledger.commands.common import CommandError, api_error
from sessionledger.core.formats.base import iter_lines

UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
HEX = re.compile(r"^[0-9a-fA-F]{7,40}$")


@dataclass
class Target:
    """What a `<commit|session>` argument names: an agent session, maybe one segment of it."""

    agent_session_id: str
    segment_id: str | None = None  # the captured session (segment) the argument named
    commit: str | None = None  # the commit the argument named, as resolved here
    relinked: dict[str, str] = field(default_factory=dict)  # old commit (sessions) -> new commit (here)


@dataclass
class Segment:
    session: dict[str, Any]
    start: int  # where its bytes sit in the stitched transcript
    end: int

    @property
    def commit(self) -> str | None:
        return self.session.get("commit_hash") or None


@dataclass
class Turn:
    number: int
    start: int
    end: int
    prompt: str
    timestamp: str | None
    checkpoint: str | None  # the commit the code was at when the turn ended
    before_first: bool  # no commit captured yet: `checkpoint` is the first one, take its parent
    made: list[dict[str, Any]]  # checkpoint sessions whose commit was made during this turn


@dataclass
class Step:
    """A point to fork at: a prompt, a commit captured inside a turn, or a tool call."""

    kind: str  # "prompt", "commit" or "tool"
    ref: str  # the message uuid, or the commit's full hash
    turn: int
    end: int  # where a cut after it ends in the stitched bytes (tool results included)
    label: str
    timestamp: str | None
    code: str | None  # the commit the code is at (as recorded: relinks are applied later)
    code_is_parent: bool  # before the session's first commit: take `code`'s parent
    session: dict[str, Any] | None = None  # a commit step's checkpoint session

    @property
    def short(self) -> str:
        """How `turns` shows it and `--at` takes it: the commit's first 10, a uuid's first 8."""
        return self.ref[:10] if self.kind == "commit" else self.ref[:8]


@dataclass
class AgentSession:
    id: str
    listing: dict[str, Any]
    raw: bytes
    segments: list[Segment]
    turns: list[Turn]
    agent: Agent = field(default_factory=lambda: agents.get(None))
    _steps: list[Step] | None = None

    @property
    def steps(self) -> list[Step]:
        if self._steps is None:
            self._steps = find_steps(self.raw, self.segments, self.turns, self.agent)
        return self._steps

    @property
    def gaps(self) -> list[dict[str, Any]]:
        return list(self.listing.get("gaps") or [])

    def turn(self, number: int) -> Turn:
        if not 1 <= number <= len(self.turns):
            count = len(self.turns)
            raise CommandError(f"no turn {number}: agent session {self.id} has {count} turn{'s' * (count != 1)}")
        return self.turns[number - 1]

    def segment(self, session_id: str) -> Segment | None:
        return next((s for s in self.segments if s.session.get("id") == session_id), None)

    def turn_of_segment(self, segment: Segment) -> int:
        """The turn during which a segment was captured (its commit made): 1 at least."""
        starts = [t.start for t in self.turns]
        return max(1, bisect.bisect_left(starts, segment.end))


# --- resolving an argument ---------------------------------------------------------------------


def resolve(api: Client, slug: str, ref: str, repo_dir: str | None) -> Target:
    """A session id, an agent session id, or a commit (anything git can resolve, or a hash)."""
    ref = ref.strip()
    if UUID.match(ref):
        return _resolve_uuid(api, slug, ref.lower())
    sha = local_commit(repo_dir, ref) if repo_dir else None
    if sha is None and not HEX.match(ref):
        raise CommandError(f"{ref!r} is neither a session id nor a commit of this repository")
    return _resolve_commit(api, slug, sha or ref.lower())


def _resolve_uuid(api: Client, slug: str, ref: str) -> Target:
    try:
        session = api.get(f"/projects/{slug}/sessions/{ref}")
    except ApiError as exc:
        if exc.status != 404:
            raise api_error(exc) from None
    else:
        if not session.get("agent_session_id"):
            raise CommandError(f"session {ref} does not record which agent session it came from")
        return Target(session["agent_session_id"], segment_id=session["id"], commit=session.get("commit_hash"))
    try:
        api.get(f"/projects/{slug}/agent-sessions/{ref}")
    except ApiError as exc:
        if exc.status == 404:
            raise CommandError(f"no captured session or agent session {ref} in {slug}") from None
        raise api_error(exc) from None
    return Target(ref)


def _resolve_commit(api: Client, slug: str, sha: str) -> Target:
    try:
        found = api.get(f"/projects/{slug}/commits/{sha}").get("results", [])
    except ApiError as exc:
        raise api_error(exc) from None
    found = [s for s in found if s.get("agent_session_id")]
    if not found:
        raise CommandError(f"no captured session for commit {sha[:12]} in {slug}")
    rank = {"checkpoint": 0, "manual": 1, "clear": 2, "end": 3}
    best = min(found, key=lambda s: (rank.get(s.get("kind"), 9), s.get("created_at") or ""))
    commit = best.get("commit_hash") or sha
    relinked = {commit: sha} if len(sha) == 40 and not commit.startswith(sha) else {}
    return Target(best["agent_session_id"], segment_id=best["id"], commit=sha, relinked=relinked)


def local_commit(repo_dir: str | None, ref: str) -> str | None:
    if not repo_dir:
        return None
    text = gitmeta.git(repo_dir, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False).strip()
    return text if len(text) in (40, 64) else None


# --- loading ----------------------------------------------------------------------------------


def load(api: Client, slug: str, agent_session_id: str, *, allow_gaps: bool) -> AgentSession:
    """The listing and the stitched transcript; a gap refuses unless `allow_gaps`."""
    base = f"/projects/{slug}/agent-sessions/{agent_session_id}"
    try:
        listing = api.get(base)
        if listing.get("gaps") and not allow_gaps:
            raise CommandError(gap_message(agent_session_id, listing["gaps"]))
        raw = api.get_bytes(f"{base}/transcript", {"allow_gaps": "1" if allow_gaps else None})
    except ApiError as exc:
        if exc.status == 404:
            raise CommandError(f"no agent session {agent_session_id} in {slug}") from None
        if exc.code == "gap":
            raise CommandError(gap_message(agent_session_id, exc.error.get("gaps") or [])) from None
        raise api_error(exc) from None
    segments = place_segments(listing.get("segments") or [], len(raw))
    agent = agent_of(listing)
    return AgentSession(agent_session_id, listing, raw, segments, find_turns(raw, segments, agent), agent)


def agent_of(listing: dict[str, Any]) -> Agent:
    """The adapter of the agent that wrote the session (as its segments were ingested)."""
    first = (listing.get("segments") or [{}])[0]
    name = listing.get("agent") or first.get("agent")
    try:
        return agents.get(name if isinstance(name, str) else None)
    except ValueError:
        raise CommandError(f"this client does not know the agent {name!r}: upgrade it") from None


def fetcher(api: Client, base: str) -> Any:
    """`fetch(path)`: a file of the agent session at `base` (a sub-agent or a saved tool output)."""

    def fetch(path: str) -> bytes:
        try:
            return api.get_bytes(f"{base}/transcript", {"part": path, "allow_gaps": "1"})
        except ApiError as exc:
            raise api_error(exc) from None

    return fetch


def gap_message(agent_session_id: str, gaps: list[dict[str, Any]]) -> str:
    first = gaps[0] if gaps else {}
    where = f"bytes {first.get('expected_start')}–{first.get('actual_start')}" if first else "bytes"
    return (
        f"agent session {agent_session_id} has {len(gaps) or 'a'} gap(s) in its captured segments ({where} "
        "were never uploaded, or were deleted): nothing written. Pass --allow-gaps to use what there is."
    )


def place_segments(sessions: list[dict[str, Any]], total: int) -> list[Segment]:
    """Each segment's span in the stitched bytes, from the sizes the server reports."""
    segments, position = [], 0
    for session in sessions:
        size = session.get("transcript_bytes")
        size = int(size if size is not None else session.get("raw_size_bytes") or 0)
        segments.append(Segment(session, position, position + size))
        position += size
    if position != total:
        raise CommandError(
            f"the server's segment sizes ({position} bytes) do not add up to the transcript it sent "
            f"({total} bytes); is the server older than this client?"
        )
    return segments


def find_turns(raw: bytes, segments: list[Segment], agent: Agent) -> list[Turn]:
    starts = agent.format.turn_starts(raw)
    ends = [*starts[1:], len(raw)]
    prompts = agent.turn_prompts(raw, starts)
    turns = []
    for number, (start, end, (text, stamp)) in enumerate(zip(starts, ends, prompts, strict=True), 1):
        checkpoint, before_first = _checkpoint(segments, end)
        made = [s.session for s in segments if start < s.end <= end and s.session.get("kind") == "checkpoint"]
        turns.append(Turn(number, start, end, text, stamp, checkpoint, before_first, made))
    return turns


def _checkpoint(segments: list[Segment], end: int) -> tuple[str | None, bool]:
    """The commit of the last segment captured by `end`; before any, the first segment's commit —
    to be taken as its parent when that segment is the checkpoint that made it."""
    done = [s for s in segments if s.end <= end and s.commit]
    if done:
        return done[-1].commit, False
    first = next((s for s in segments if s.commit), None)
    if first is None:
        return None, False
    return first.commit, first.session.get("kind") == "checkpoint"


def find_steps(raw: bytes, segments: list[Segment], turns: list[Turn], agent: Agent) -> list[Step]:
    """Prompts and tool calls from the bytes, commits from the checkpoint segments, in order."""
    cutter = agent.cutter(raw)
    found: list[tuple[int, int, Step]] = []
    for step in agent.format.steps(raw):
        end = cutter.end(step.end)
        code, parent = _checkpoint(segments, end)
        kind = "prompt" if step.kind == "prompt" else "tool"
        found.append((step.end, 0, Step(kind, step.uuid, 0, 0, step.label, step.timestamp, code, parent)))
    for segment in segments:
        if segment.session.get("kind") != "checkpoint" or not segment.commit:
            continue
        label = str(segment.session.get("commit_message") or "").split("\n", 1)[0]
        end = cutter.end(segment.end)
        stamp = segment.session.get("captured_at")
        step = Step("commit", segment.commit, 0, 0, label, stamp, segment.commit, False, segment.session)
        found.append((segment.end, 1, step))
    starts = [t.start for t in turns]
    steps = []
    for position, _, step in sorted(found, key=lambda item: (item[0], item[1])):
        step.turn = max(1, bisect.bisect_right(starts, max(0, position - 1)))
        step.end = cutter.end(position)
        steps.append(step)
    return steps


def find_step(agent: AgentSession, text: str) -> Step | Turn:
    """A `--at` value: a turn number, a commit (prefix), or a message uuid (prefix ≥ 8)."""
    text = text.strip()
    if text.isdigit() and len(text) <= 6:
        return agent.turn(int(text))
    lowered = text.lower()
    commits = [s for s in agent.steps if s.kind == "commit" and len(lowered) >= 7 and s.ref.startswith(lowered)]
    if commits:
        return commits[0]
    messages = [s for s in agent.steps if s.kind != "commit" and len(lowered) >= 8 and s.ref.startswith(lowered)]
    if len(messages) == 1:
        return messages[0]
    if len(messages) > 1:
        raise CommandError(f"{text!r} names {len(messages)} steps of agent session {agent.id}: give more of it")
    raise CommandError(
        f"no step {text!r} in agent session {agent.id}: give a turn number, a commit captured in it, "
        "or a message id from `sessionledger turns --steps`"
    )


def checkpoint_commit(turn: Turn, repo_dir: str, relinked: dict[str, str]) -> str:
    """The commit to check out for the end of `turn`, resolved in the local repository."""
    if not turn.checkpoint:
        raise CommandError(f"no commit is linked to the segments of turn {turn.number}")
    return code_commit(turn.checkpoint, turn.before_first, repo_dir, relinked)


def step_commit(step: Step, repo_dir: str, relinked: dict[str, str]) -> str:
    """The commit to check out for the code at `step`, resolved in the local repository."""
    if not step.code:
        raise CommandError(f"no commit is linked to the segments up to step {step.short}")
    return code_commit(step.code, step.code_is_parent, repo_dir, relinked)


def code_commit(recorded: str, parent: bool, repo_dir: str, relinked: dict[str, str]) -> str:
    sha = relinked.get(recorded, recorded)
    if parent:
        before = local_commit(repo_dir, f"{sha}^")
        if before is None and local_commit(repo_dir, sha) is None:
            raise _missing(sha)
        return before or sha
    found = local_commit(repo_dir, sha)
    if found is None:
        raise _missing(sha)
    return found


def _missing(sha: str) -> CommandError:
    return CommandError(
        f"commit {sha[:12]} is not in this repository: fetch it, or after a rebase run `sessionledger relink`"
    )


# --- what the redactor changed, as recorded on this machine ----------------------------------------


def changed_lines(agent: AgentSession, cut: bytes | None = None) -> Any:
    """`changed(line index)`: True/False where this machine uploaded the segment and kept which
    lines redaction changed (`sent/`), None elsewhere (the caller then looks for the mark).

    Indexes count lines of the stitched transcript, or of `cut` when given: a cut keeps the
    stitched lines in order but may leave some out (summaries whose leaf was cut)."""
    from sessionledger import queue
    from sessionledger.intent import Intent

    known: dict[tuple[Any, Any], set[int]] = {}  # (start, end offset) as the queue recorded them
    for record in queue.sent(queue.KEEP_SENT):
        intent = Intent.from_json(record.get("intent"))
        if intent.agent_session_id != agent.id or intent.kind == "task":
            continue
        lines = ((record.get("local") or {}).get("changed_lines") or {}).get("transcript") or []
        known[(intent.start_offset, intent.end_offset)] = set(lines)
    first_lines, tables = [], []
    line = 0
    for segment in agent.segments:
        first_lines.append(line)
        tables.append(known.get((segment.session.get("start_offset"), segment.session.get("end_offset"))))
        line += agent.raw.count(b"\n", segment.start, segment.end)

    positions = _line_positions(agent.raw, cut) if cut is not None else None

    def changed(index: int) -> bool | None:
        if positions is not None:
            index = positions[index] if index < len(positions) else -1
        position = bisect.bisect_right(first_lines, index) - 1
        table = tables[position] if position >= 0 else None
        return None if table is None else (index - first_lines[position]) in table

    return changed


def _line_positions(raw: bytes, cut: bytes) -> list[int]:
    """For each line of `cut` (a subsequence of `raw`'s lines), its line index in `raw`."""
    lines = [line for _, line in iter_lines(raw)]
    positions, j = [], 0
    for _, line in iter_lines(cut):
        while j < len(lines) and lines[j] != line:
            j += 1
        positions.append(j)
        j += 1
    return positions

"""The queue intent and the capture state's records, typed (docs/client.md "The queue").

An intent is what a hook decides to capture: a byte range of a transcript (and of its sub-agents)
and what it is linked to. It is written once to `queue/<id>/intent.json` and read by every later
step (prepare, upload, `status`, tasks, /clear). `Intent.from_json` is its one reader and
`Intent.to_json` its one writer: the JSON keeps the keys clients have always written, so an entry
queued by an older client still uploads, and a key this client does not know is carried through.

The state records (`state.json`) stay plain JSON objects mutated in place under the state lock;
their TypedDicts name the keys each one has.

Plain classes, not dataclasses, and `typing` only for the type checker: every commit capture imports
this module, and `dataclasses` (through `inspect`) alone costs about half of `python -c pass`
(bench/bench_hook.py).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing would slow every capture
if TYPE_CHECKING:
    from typing import Any, TypedDict

VERSION = 1
# Written only when set: an intent without them is what clients before them wrote.
_OPTIONAL_FLAGS = ("await_commit", "imported", "after_clear", "attribute_commit")


class SubagentRange:
    """The bytes [start_offset, end_offset) of one sub-agent's transcript file."""

    __slots__ = ("agent_id", "crc", "end_offset", "path", "start_offset")

    def __init__(self, agent_id: str, path: str, start_offset: int, end_offset: int, crc: int | None = None) -> None:
        self.agent_id, self.path, self.crc = agent_id, path, crc
        self.start_offset, self.end_offset = start_offset, end_offset

    @classmethod
    def from_json(cls, data: Any) -> SubagentRange:
        data = data if isinstance(data, dict) else {}
        offsets = (int(data.get("start_offset") or 0), int(data.get("end_offset") or 0))
        return cls(str(data.get("agent_id") or ""), str(data.get("path") or ""), *offsets, _maybe_int(data.get("crc")))

    def to_json(self) -> SubagentRangeJSON:
        return {
            "agent_id": self.agent_id,
            "path": self.path,
            "start_offset": self.start_offset,
            "end_offset": self.end_offset,
            "crc": self.crc,
        }

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SubagentRange) and self.to_json() == other.to_json()

    def __repr__(self) -> str:
        return f"SubagentRange({self.to_json()!r})"


class Intent:
    """One queued capture: which bytes, why (`kind`), and what they are linked to."""

    __slots__ = (
        "after_clear",
        "agent",
        "agent_session_id",
        "attribute_commit",
        "await_commit",
        "capture",
        "captured_at",
        "commit_hash",
        "crc",
        "cwd",
        "end_offset",
        "extra",
        "feature_branch",
        "imported",
        "kind",
        "previous_head",
        "project",
        "repo",
        "start_offset",
        "status",
        "subagents",
        "task_id",
        "transcript",
        "version",
    )

    def __init__(
        self,
        kind: str,
        transcript: str,
        start_offset: int,
        end_offset: int,
        agent: str | None = None,  # None: an intent from before agents were named (Claude Code)
        agent_session_id: str | None = None,
        crc: int | None = None,
        subagents: list[SubagentRange] | None = None,
        commit_hash: str | None = None,
        previous_head: str | None = None,
        feature_branch: str = "",
        task_id: str | None = None,
        status: str | None = None,
        repo: str | None = None,  # the worktree of the capture
        cwd: str | None = None,
        project: str | None = None,  # SESSIONLEDGER_PROJECT at capture time
        captured_at: float = 0.0,
        capture: str | None = None,  # "snapshot": the whole file was copied beside the intent
        await_commit: bool = False,  # a task closed before the commit of its work
        imported: bool = False,  # queued by `import`, not by a hook
        after_clear: bool = False,  # a commit made after /clear, linked to the cleared conversation
        attribute_commit: bool = False,  # an `end` carrying the record of a commit no hook saw
        version: int = VERSION,
        extra: dict[str, Any] | None = None,  # keys a newer client wrote, kept as they are
    ) -> None:
        self.kind, self.transcript, self.start_offset, self.end_offset = kind, transcript, start_offset, end_offset
        self.agent, self.agent_session_id, self.crc = agent, agent_session_id, crc
        self.subagents: list[SubagentRange] = subagents if subagents is not None else []
        self.commit_hash, self.previous_head, self.feature_branch = commit_hash, previous_head, feature_branch
        self.task_id, self.status, self.repo, self.cwd, self.project = task_id, status, repo, cwd, project
        self.captured_at, self.capture, self.version = captured_at, capture, version
        self.await_commit, self.imported, self.after_clear = await_commit, imported, after_clear
        self.attribute_commit = attribute_commit
        self.extra: dict[str, Any] = extra if extra is not None else {}

    def replace(self, **changes: Any) -> Intent:
        """A copy with ``changes`` applied (a name that is no field is an AttributeError)."""
        twin = Intent.from_json(self.to_json())
        for name, value in changes.items():
            setattr(twin, name, value)
        return twin

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Intent) and self.to_json() == other.to_json()

    def __repr__(self) -> str:
        return f"Intent({self.to_json()!r})"

    @classmethod
    def from_json(cls, data: Any) -> Intent:
        """Read an `intent.json` object, of this client or an older one (missing keys default)."""
        data = dict(data) if isinstance(data, dict) else {}
        known = set(cls.__slots__) - {"extra"}

        def text(key: str) -> str | None:
            value = data.get(key)
            return str(value) if value is not None else None

        return cls(
            kind=str(data.get("kind") or "?"),
            transcript=str(data.get("transcript") or ""),
            start_offset=int(data.get("start_offset") or 0),
            end_offset=int(data.get("end_offset") or 0),
            agent=text("agent"),
            agent_session_id=text("agent_session_id"),
            crc=_maybe_int(data.get("crc")),
            subagents=[SubagentRange.from_json(s) for s in data.get("subagents") or []],
            commit_hash=text("commit_hash"),
            previous_head=text("previous_head"),
            feature_branch=str(data.get("feature_branch") or ""),
            task_id=text("task_id"),
            status=text("status"),
            repo=text("repo"),
            cwd=text("cwd"),
            project=text("project"),
            captured_at=float(data.get("captured_at") or 0),
            capture=text("capture"),
            await_commit=bool(data.get("await_commit")),
            imported=bool(data.get("imported")),
            after_clear=bool(data.get("after_clear")),
            attribute_commit=bool(data.get("attribute_commit")),
            version=int(data.get("version") or VERSION),
            extra={k: v for k, v in data.items() if k not in known},
        )

    def to_json(self) -> dict[str, Any]:
        """The `intent.json` object (the keys every client has written, flags only when set)."""
        data: dict[str, Any] = {
            **self.extra,
            "version": self.version,
            "kind": self.kind,
            "agent": self.agent,
            "agent_session_id": self.agent_session_id,
            "transcript": self.transcript,
            "start_offset": self.start_offset,
            "end_offset": self.end_offset,
            "crc": self.crc,
            "subagents": [s.to_json() for s in self.subagents],
            "commit_hash": self.commit_hash,
            "previous_head": self.previous_head,
            "feature_branch": self.feature_branch,
            "task_id": self.task_id,
            "status": self.status,
            "repo": self.repo,
            "cwd": self.cwd,
            "project": self.project,
            "captured_at": self.captured_at,
        }
        if self.capture is not None:
            data["capture"] = self.capture
        for flag in _OPTIONAL_FLAGS:
            if getattr(self, flag):
                data[flag] = True
        return data

    def describe(self) -> str:
        """`checkpoint 1a2b3c4d5e` / `task SL-42 (complete)` for messages and `status`."""
        if self.kind == "task":
            return f"task {self.task_id} ({self.status or 'complete'})"
        return f"{self.kind} {(self.commit_hash or '')[:10]}".rstrip()


def _maybe_int(value: Any) -> int | None:
    return int(value) if value is not None else None


# The records' shapes, for the type checker; at run time each is a plain dict (see the docstring).
if TYPE_CHECKING:

    class SubagentRangeJSON(TypedDict, total=False):
        agent_id: str
        path: str
        start_offset: int
        end_offset: int
        crc: int | None

    class TranscriptRecord(TypedDict, total=False):
        """`state.json` → `transcripts[path]`: how far one transcript has been captured."""

        offset: int
        subagents: dict[str, int]  # sub-agent file → its captured offset
        captured_at: float
        session_id: str
        repo: str  # the worktree of the last capture (`tails` links an unended session's tail there)
        crc: int  # a snapshot transcript's last captured checksum
        imported: bool
        task_end: int  # the end of the last task capture (an overlay: the offset does not move)
        task_subagents: dict[str, int]

    class TaskMark(TypedDict, total=False):
        """`state.json` → `tasks[task_id]`: where `task start` marked a task's beginning."""

        transcript: str
        offset: int
        subagents: dict[str, int]
        started_at: float
        cwd: str
        head: str | None  # HEAD at the start: a different HEAD at the end was committed during the task

    class Status(TypedDict, total=False):
        """`queue/<id>/status.json`: the uploader's bookkeeping of one entry."""

        state: str
        attempts: int
        next_at: float
        reason: str
        updated_at: float
        limit: int
        reprepare: bool
        http_status: int
        code: str
else:
    SubagentRangeJSON = TranscriptRecord = TaskMark = Status = dict

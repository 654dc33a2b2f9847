"""Cut existing Claude Code transcripts into the segments the hooks would have captured (`import`).

A transcript of this repository is cut right after each Bash tool call that made a commit: the
call's command runs `git … commit`, and a commit of the repository has a commit time between the
call's tool_use and its tool_result (a little slack: git keeps whole seconds). The commit's
segment is everything since the previous cut; what follows the last commit becomes an `end`
segment linked to the commit HEAD was at (as SessionEnd would have captured it). Sub-agent files
go with the segment during which they started.

The result is a list of queue intents, the same shape the hooks write, so uploading reuses the
queue, the preparation (slim, redact, fit) and the uploader with its Idempotency-Key: importing
the same transcript twice yields the same keys and the server creates nothing new.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from sessionledger import formats, gitmeta, paths, transcripts
from sessionledger.formats.base import iter_lines, load_record

SLACK_SECONDS = 2.0
_GIT_COMMIT = re.compile(r"\bgit\b[^;&|\n]*?\bcommit\b")
_MESSAGE = re.compile(r"""-m\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+))""")
AGENT = "claude-code"


@dataclass
class Commit:
    sha: str
    time: int
    subject: str


@dataclass
class Call:
    """A Bash call that ran `git commit`: when it was made and answered, where its answer ends."""

    used_at: float
    answered_at: float
    end: int  # byte offset just after the tool_result line
    message: str | None
    branch: str


@dataclass
class Cut:
    end: int
    commit: Commit
    branch: str


@dataclass
class Plan:
    transcript: str
    session_id: str
    intents: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""  # why nothing is planned


# --- which transcripts ---------------------------------------------------------------------------


def worktrees(root: str) -> list[str]:
    """Every working tree of the repository (a session may have run in any of them)."""
    out = gitmeta.git(root, "worktree", "list", "--porcelain", check=False)
    found = [line[len("worktree ") :] for line in out.splitlines() if line.startswith("worktree ")]
    return [os.path.realpath(p) for p in found] or [os.path.realpath(root)]


def repo_transcripts(trees: list[str]) -> list[tuple[str, str]]:
    """(transcript path, recorded cwd) of conversations held in one of `trees` (or below)."""
    root = os.path.join(paths.claude_dir(), "projects")
    prefixes = [formats.encode_project_dir(tree) for tree in trees]
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    found = []
    for name in names:
        if not any(name == p or name.startswith(p + "-") for p in prefixes):
            continue  # the encoding is lossy: the recorded cwd decides below
        for path in _jsonl_files(os.path.join(root, name)):
            cwd = recorded_cwd(path)
            if cwd and any(cwd == tree or cwd.startswith(tree + os.sep) for tree in trees):
                found.append((path, cwd))
    return found


def _jsonl_files(directory: str) -> list[str]:
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    # `agent-*.jsonl` beside the sessions are sub-agents of the older layout: they go with their session
    names = (e for e in entries if e.name.endswith(transcripts.SUFFIX) and not transcripts.is_agent_file(e.name))
    return sorted(e.path for e in names if e.is_file())


def recorded_cwd(path: str, limit: int = 1 << 20) -> str | None:
    from sessionledger.formats.resume import first_cwd

    try:
        with open(path, "rb") as handle:
            head = handle.read(limit)
    except OSError:
        return None
    return first_cwd(head[: formats.complete_lines(head)])


# --- commits -------------------------------------------------------------------------------------


def commits_between(root: str, since: float, until: float) -> list[Commit]:
    """Commits of any branch (or only in the reflog: amended, rebased) made in [since, until]."""
    out = gitmeta.git(
        root,
        "log",
        "--all",
        "--reflog",
        "--no-merges",
        f"--since=@{int(since)}",
        f"--until=@{int(until) + 1}",
        "--format=%H %ct %s",
        check=False,
    )
    found = {}
    for line in out.splitlines():
        sha, stamp, subject = [*line.split(" ", 2), ""][:3]
        if stamp.isdigit():
            found[sha] = Commit(sha, int(stamp), subject)
    return sorted(found.values(), key=lambda c: c.time)


def commit_at(root: str, when: float, branch: str) -> str | None:
    """The commit `branch` (else HEAD) was at, at `when`."""
    for rev in ([branch] if branch else []) + ["HEAD"]:
        sha = gitmeta.git(root, "rev-list", "-1", f"--before=@{int(when)}", rev, "--", check=False).strip()
        if sha:
            return sha
    return None


# --- cutting one transcript ----------------------------------------------------------------------


def commit_calls(raw: bytes) -> list[Call]:
    """Bash calls that ran `git commit`, in the order they were answered."""
    pending: dict[str, tuple[float, str | None, str]] = {}
    calls = []
    for offset, line in iter_lines(raw):
        if b'"tool_use"' in line and b'"Bash"' in line:
            _note_use(line, pending)
        elif b'"tool_result"' in line and pending:
            calls += _answers(line, offset, pending)
    return calls


def _note_use(line: bytes, pending: dict[str, tuple[float, str | None, str]]) -> None:
    rec = load_record(line)
    if not rec or rec["type"] != "assistant" or rec.get("isSidechain") is True:
        return
    when = _stamp(rec)
    for block in _blocks(rec):
        command = (block.get("input") or {}).get("command") if block.get("type") == "tool_use" else None
        is_commit = block.get("name") == "Bash" and isinstance(command, str) and _GIT_COMMIT.search(command)
        if is_commit and when is not None and isinstance(block.get("id"), str):
            pending[block["id"]] = (when, _message(command), str(rec.get("gitBranch") or ""))


def _answers(line: bytes, offset: int, pending: dict[str, tuple[float, str | None, str]]) -> list[Call]:
    rec = load_record(line)
    when = _stamp(rec) if rec else None
    calls = []
    for block in _blocks(rec) if rec and when is not None else []:
        used = pending.pop(block.get("tool_use_id"), None) if block.get("type") == "tool_result" else None
        if used is not None:
            calls.append(Call(used[0], when, offset + len(line), used[1], used[2]))  # type: ignore[arg-type]
    return calls


def _blocks(rec: dict[str, Any]) -> list[dict[str, Any]]:
    message = rec.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _stamp(rec: dict[str, Any]) -> float | None:
    stamp = rec.get("timestamp")
    return transcripts.iso_to_epoch(stamp) if isinstance(stamp, str) else None


def _message(command: str) -> str | None:
    match = _MESSAGE.search(command)
    if not match:
        return None
    text = next(g for g in match.groups() if g is not None)
    return text.replace('\\"', '"').strip().splitlines()[0] if text.strip() else None


def match_cuts(calls: list[Call], commits: list[Commit]) -> list[Cut]:
    """Each call takes the commit made while it ran (the one its `-m` names, else the latest)."""
    used: set[str] = set()
    cuts = []
    for call in calls:
        window = [
            c
            for c in commits
            if c.sha not in used and call.used_at - SLACK_SECONDS <= c.time <= call.answered_at + SLACK_SECONDS
        ]
        if not window:
            continue
        named = [c for c in window if call.message and c.subject == call.message]
        chosen = (named or window)[-1]
        used.add(chosen.sha)
        cuts.append(Cut(call.end, chosen, call.branch))
    return cuts


@dataclass
class Resume:
    """Where an earlier import of this transcript stopped (its state record), if it did."""

    offset: int = 0
    subagents: dict[str, int] = field(default_factory=dict)


def plan_transcript(path: str, cwd: str, root: str, resume: Resume | None = None) -> Plan:
    """The intents that capture a transcript (after `resume.offset`) as the hooks would have."""
    resume = resume or Resume()
    plan = Plan(path, transcripts.session_id_of(path))
    with open(path, "rb") as handle:
        raw = handle.read()
    raw = raw[: formats.complete_lines(raw)]
    first, last = _time_span(raw)
    if first is None or last is None or not formats.turn_starts(raw):
        plan.note = "no conversation in it"
        return plan
    segment = _Segmenter(plan, raw, root, cwd, resume.offset)
    for cut in match_cuts(commit_calls(raw), commits_between(root, first - 60, last + 60)):
        segment.until(cut.end, "checkpoint", cut.commit.sha, cut.branch, cut.commit.time)
    branch = _last_branch(raw)
    head = segment.previous or commit_at(root, last, branch)
    if head:
        segment.until(len(raw), "end", head, branch, last)
    _attach_subagents(plan.intents, _subagents(path, resume.subagents), first)
    if not plan.intents and resume.offset < len(raw):
        plan.note = "no commit of this repository before it ended"
    return plan


class _Segmenter:
    """Consecutive segments of one transcript, each starting where the previous one ended."""

    def __init__(self, plan: Plan, raw: bytes, root: str, cwd: str, start: int) -> None:
        self.plan, self.raw, self.root, self.cwd = plan, raw, root, cwd
        self.start, self.previous = start, None

    def until(self, end: int, kind: str, commit: str, branch: str, when: float) -> None:
        if end > self.start:
            self._append(end, kind, commit, branch, when)
            self.start = end
        if kind == "checkpoint":
            self.previous = commit

    def _append(self, end: int, kind: str, commit: str, branch: str, when: float) -> None:
        self.plan.intents.append(
            {
                "version": 1,
                "kind": kind,
                "agent": AGENT,
                "agent_session_id": self.plan.session_id,
                "transcript": self.plan.transcript,
                "start_offset": self.start,
                "end_offset": end,
                "crc": transcripts.tail_crc_of(self.raw[self.start : end]),
                "subagents": [],
                "commit_hash": commit,
                "previous_head": self.previous if kind == "checkpoint" else None,
                "feature_branch": branch,
                "task_id": None,
                "status": None,
                "repo": self.root,
                "cwd": self.cwd,
                "project": os.environ.get("SESSIONLEDGER_PROJECT") or None,
                "captured_at": float(when),
                "imported": True,
            }
        )


def _time_span(raw: bytes) -> tuple[float | None, float | None]:
    first = last = None
    for _, line in iter_lines(raw):
        match = re.search(rb'"timestamp":"([^"]+)"', line)
        when = transcripts.iso_to_epoch(match.group(1).decode()) if match else None
        if when is not None:
            first = when if first is None else first
            last = when
    return first, last


def _last_branch(raw: bytes) -> str:
    for match in reversed(list(re.finditer(rb'"gitBranch":"([^"]*)"', raw[-(1 << 20) :]))):
        return match.group(1).decode("utf-8", "replace")
    return ""


def _subagents(path: str, starts: dict[str, int]) -> list[dict[str, Any]]:
    found = []
    for agent_id, sub in transcripts.subagent_files(path):
        begin = int(starts.get(sub, 0))
        try:
            end, crc = transcripts.complete_end(sub, begin)
        except (OSError, transcripts.TranscriptShrunk):
            continue
        if end > begin:
            found.append({"agent_id": agent_id, "path": sub, "start_offset": begin, "end_offset": end, "crc": crc})
    return found


def _attach_subagents(intents: list[dict[str, Any]], subagents: list[dict[str, Any]], first: float) -> None:
    """Each sub-agent file joins the segment during which its first line was written."""
    if not intents:
        return
    for sub in subagents:
        started = transcripts.first_timestamp(sub["path"]) or first
        target = next((i for i in intents if started <= i["captured_at"]), intents[-1])
        target["subagents"].append(sub)


def modified_since(path: str, since: float | None) -> bool:
    if since is None:
        return True
    try:
        return os.path.getmtime(path) >= since
    except OSError:
        return False

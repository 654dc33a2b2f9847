"""Cut existing agent transcripts into the segments the hooks would have captured (`import`).

Every agent's adapter lists the transcripts recorded in the repository's working trees
(`agent.session_files`) and finds the shell calls that made a commit (`agent.commit_calls`). A
transcript is cut right after each such call: its command runs `git … commit`, and a commit of
the repository has a commit time between the call and its result (a little slack: git keeps
whole seconds). The commit's segment is everything since the previous cut; what follows the last
commit becomes an `end` segment linked to the commit HEAD was at (as SessionEnd would have
captured it). Sub-agent files go with the segment during which they started. A transcript the
agent rewrites whole (Gemini CLI before v0.39) has no byte prefix to cut: it becomes one
whole-file segment, linked to the last commit made during it (else to HEAD at its end).

The result is a list of queue intents, the same shape the hooks write, so uploading reuses the
queue, the preparation (slim, redact, fit) and the uploader with its Idempotency-Key: importing
the same transcript twice yields the same keys and the server creates nothing new.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from sessionledger import agents, gitmeta, transcripts
from sessionledger.agents.base import SNAPSHOT, Agent, Call
from sessionledger.core import formats
from sessionledger.intent import Intent, SubagentRange

SLACK_SECONDS = 2.0


@dataclass
class Commit:
    sha: str
    time: int
    subject: str


@dataclass
class Cut:
    end: int
    commit: Commit
    branch: str


@dataclass
class Plan:
    transcript: str
    session_id: str
    intents: list[Intent] = field(default_factory=list)
    note: str = ""  # why nothing is planned


# --- which transcripts ---------------------------------------------------------------------------


def worktrees(root: str) -> list[str]:
    """Every working tree of the repository (a session may have run in any of them)."""
    out = gitmeta.git(root, "worktree", "list", "--porcelain", check=False)
    found = [line[len("worktree ") :] for line in out.splitlines() if line.startswith("worktree ")]
    return [os.path.realpath(p) for p in found] or [os.path.realpath(root)]


def repo_transcripts(trees: list[str], only: str | None = None) -> list[tuple[Agent, str, str]]:
    """(agent, transcript path, recorded cwd) of conversations held in one of `trees` (or below),
    of every agent (or only the one named `only`)."""
    found = []
    for agent in agents.every():
        if only is None or agent.name == only:
            found += [(agent, path, cwd) for path, cwd in agent.session_files(trees)]
    return found


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


def _tree_and_branch(root: str, cwd: str, branch: str) -> tuple[str | None, str]:
    """Where an end segment's commit is looked up: the recorded branch in the repository, else
    (Claude Code 1.0.x, Codex, Gemini record none) the worktree holding the session's cwd."""
    return (root, branch) if branch else _tree_of(root, cwd)


def _tree_of(root: str, cwd: str) -> tuple[str | None, str]:
    """(the worktree holding `cwd`, its branch or ''), or (None, '') when no worktree holds it:
    never the worktree `import` runs from, which may be on another branch."""
    where = os.path.realpath(cwd) if cwd else ""
    holding = [t for t in worktrees(root) if where == t or where.startswith(t.rstrip(os.sep) + os.sep)]
    if not holding:
        return None, ""
    tree = max(holding, key=len)
    return tree, gitmeta.git(tree, "symbolic-ref", "--short", "-q", "HEAD", check=False).strip()


# --- cutting one transcript ----------------------------------------------------------------------


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


def plan_transcript(path: str, cwd: str, root: str, resume: Resume | None = None, agent: Agent | None = None) -> Plan:
    """The intents that capture a transcript (after `resume.offset`) as the hooks would have."""
    agent = agent or agents.for_transcript(path)
    resume = resume or Resume()
    plan = Plan(path, agent.session_id(path))
    with open(path, "rb") as handle:
        raw = handle.read()
    snapshot = agent.capture_mode(path) == SNAPSHOT
    if not snapshot:
        raw = raw[: formats.complete_lines(raw)]
    first, last = agent.time_span(raw)
    if first is None or last is None or not agent.format.turn_starts(raw):
        plan.note = "no conversation in it"
        return plan
    segment = _Segmenter(plan, raw, root, cwd, 0 if snapshot else resume.offset, agent)
    cuts = match_cuts(agent.commit_calls(raw), commits_between(root, first - 60, last + 60))
    tree, branch = _tree_and_branch(root, cwd, agent.branch_of(raw))
    if tree is None and not cuts:
        plan.note = "no branch recorded and its directory is in no worktree: left unlinked"
        return plan
    tree = tree or root
    if snapshot:
        head = cuts[-1].commit.sha if cuts else commit_at(tree, last, branch)
        if head and resume.offset != len(raw):  # the same bytes as the last import: nothing new
            segment.until(len(raw), "checkpoint" if cuts else "end", head, branch, last)
        return plan
    for cut in cuts:
        segment.until(cut.end, "checkpoint", cut.commit.sha, cut.branch or branch, cut.commit.time)
    head = segment.previous or commit_at(tree, last, branch)
    if head:
        segment.until(len(raw), "end", head, branch, last)
    _attach_subagents(plan.intents, _subagents(agent, path, resume.subagents), first)
    if not plan.intents and resume.offset < len(raw):
        plan.note = "no commit of this repository before it ended"
    return plan


class _Segmenter:
    """Consecutive segments of one transcript, each starting where the previous one ended."""

    def __init__(self, plan: Plan, raw: bytes, root: str, cwd: str, start: int, agent: Agent) -> None:
        self.plan, self.raw, self.root, self.cwd, self.agent = plan, raw, root, cwd, agent
        self.start = start
        self.previous: str | None = None

    def until(self, end: int, kind: str, commit: str, branch: str, when: float) -> None:
        if end > self.start:
            self._append(end, kind, commit, branch, when)
            self.start = end
        if kind == "checkpoint":
            self.previous = commit

    def _append(self, end: int, kind: str, commit: str, branch: str, when: float) -> None:
        self.plan.intents.append(
            Intent(
                kind=kind,
                agent=self.agent.name,
                agent_session_id=self.plan.session_id,
                transcript=self.plan.transcript,
                start_offset=self.start,
                end_offset=end,
                crc=transcripts.tail_crc_of(self.raw[self.start : end]),
                commit_hash=commit,
                previous_head=self.previous if kind == "checkpoint" else None,
                feature_branch=branch,
                repo=self.root,
                cwd=self.cwd,
                project=os.environ.get("SESSIONLEDGER_PROJECT") or None,
                captured_at=float(when),
                imported=True,
                capture=SNAPSHOT if self.agent.capture_mode(self.plan.transcript) == SNAPSHOT else None,
            )
        )


def _subagents(agent: Agent, path: str, starts: dict[str, int]) -> list[SubagentRange]:
    found = []
    for agent_id, sub in agent.subagent_files(path):
        begin = int(starts.get(sub, 0))
        try:
            end, crc = transcripts.complete_end(sub, begin)
        except (OSError, transcripts.TranscriptShrunk):
            continue
        if end > begin:
            found.append(SubagentRange(agent_id, sub, begin, end, crc))
    return found


def _attach_subagents(intents: list[Intent], subagents: list[SubagentRange], first: float) -> None:
    """Each sub-agent file joins the segment during which its first line was written."""
    if not intents:
        return
    for sub in subagents:
        started = transcripts.first_timestamp(sub.path) or first
        target = next((i for i in intents if started <= i.captured_at), intents[-1])
        target.subagents.append(sub)


def modified_since(path: str, since: float | None) -> bool:
    if since is None:
        return True
    try:
        return os.path.getmtime(path) >= since
    except OSError:
        return False

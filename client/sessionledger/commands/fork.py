"""`sessionledger fork <commit|session> [--turn N | --at STEP]`: continue a captured conversation
from a turn or any step of it (docs/client.md "Steps").

Creates a branch and a worktree at the commit the code was at, and writes the conversation cut
there as a new session (fresh id) of the agent that recorded it, through its adapter
(`agent.write_resumable`): `claude -r <id>`, `codex resume <id>` or `gemini --resume <id>` in the
worktree picks up with that point's code and context. The original session file, branch and
working tree are not touched.

A point is the end of turn N (`--turn N`), or a step (`--at`): a commit captured inside a turn
(cut right after the call that made it, code at that commit), a prompt or a tool call (its
message id from `turns --steps`, Claude Code sessions only; cut after it and its results, code
at the commit captured there or the nearest one before it, never after), then the conversation's
own file writes since that commit replayed onto the worktree (`replay`), so the tree is the one the
conversation had at that point; what cannot be reproduced (shell writes, an edit that no longer
applies) is listed. Without either: a commit forks at its own
step, a checkpoint session id likewise, another session id at the end of its segment's last
turn, an agent session id at its last turn.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
import uuid
from dataclasses import dataclass, field
from typing import Any

from sessionledger import gitmeta
from sessionledger.agents.base import CannotResume, Resumable, ResumeRequest
from sessionledger.commands import agentsessions
from sessionledger.commands.agentsessions import AgentSession, Target, Turn
from sessionledger.commands.common import CommandError, confined, short, terminal_safe
from sessionledger.commands.turns import open_target, repo_root
from sessionledger.core.formats.originals import original_files


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("fork", help="branch + worktree at a turn or step, with the conversation up to there")
    parser.add_argument("ref", help="commit, session id or agent session id")
    point = parser.add_mutually_exclusive_group()
    point.add_argument("--turn", type=int, help="keep turns 1..N")
    point.add_argument("--at", metavar="STEP", help="a step: turn number, commit, or message id (`turns --steps`)")
    parser.add_argument("--worktree", help="where to create the worktree (default: next to the repository)")
    parser.add_argument("--branch", help="name of the new branch (default: fork/<session>-turn-<N> or -at-<step>)")
    parser.add_argument(
        "--exec", action="store_true", help="start the agent on the new session in the worktree (`claude -r <id>`, …)"
    )
    parser.add_argument("--allow-gaps", action="store_true", help="fork even if segments of the session are missing")
    parser.add_argument("--project", help="project slug (default: from the git remote)")
    parser.set_defaults(func=run)


@dataclass
class Point:
    """Where a fork starts: the conversation cut there and the code there."""

    name: str  # `turn-3`, `at-250e32e0a1`
    what: str  # how `fork` says it
    commit: str
    cut: bytes
    before_first: bool
    turn: Turn | None = None
    code: str | None = None  # the commit the code is at, as recorded (before relinks)


@dataclass
class Forked:
    agent: AgentSession
    point: Point
    commit: str
    branch: str
    worktree: str
    session_id: str
    cwd: str = ""
    path: str = ""
    kept_turns: int = 0
    notes: list[str] = field(default_factory=list)
    command: list[str] = field(default_factory=list)
    report: Any = None  # the adapter's ResumeReport: what writing it back changed
    replayed: Any = None  # replay.Replayed: the conversation's writes since the commit


def run(options: argparse.Namespace) -> int:
    if options.turn is not None and options.turn < 1:
        raise CommandError("--turn counts from 1 (the first prompt)")
    if repo_root(os.getcwd()) is None:
        raise CommandError("run fork inside the git repository the session belongs to (it creates a worktree)")
    ctx = open_target(options.ref, options.project)
    assert ctx.repo_dir is not None
    agent = agentsessions.load(ctx.api, ctx.slug, ctx.target.agent_session_id, allow_gaps=options.allow_gaps)
    adapter = agent.agent
    if (why := adapter.cannot_resume(agent.raw)) is not None:
        raise CommandError(why)
    program = shutil.which(adapter.executable) if options.exec else None
    if options.exec and not program:
        raise CommandError(f"--exec needs {adapter.display_name}'s `{adapter.executable}` on PATH")
    point = resolve_point(agent, ctx.target, ctx.repo_dir, turn=options.turn, at=options.at)
    commit = point.commit
    worktree = os.path.realpath(options.worktree or _free_path(_default_worktree(ctx.repo_dir, agent.id, point.name)))
    branch = options.branch or _free_branch(ctx.repo_dir, f"fork/{agent.id[:8]}-{point.name}")
    _check_free(ctx.repo_dir, worktree, branch)
    fork = Forked(agent, point, commit, branch, worktree, str(uuid.uuid4()))
    cut = point.cut
    fork.kept_turns = len(adapter.format.turn_starts(cut))
    add_worktree(ctx.repo_dir, worktree, branch, commit)
    try:
        written, fork.report = session_file(ctx, agent, cut, fork.session_id, ctx.repo_dir, worktree)
        fork.cwd = confined(written.cwd, worktree, "the session's directory")
        fork.replayed = replay_writes(agent, point, ctx.repo_dir, worktree, fork.cwd)
    except CommandError:
        remove_worktree(ctx.repo_dir, worktree, branch)
        raise
    fork.path, fork.notes, fork.command = written.path, written.notes, written.command
    _print(fork, ctx.repo_dir)
    if program:
        sys.stdout.flush()
        os.chdir(fork.cwd)
        os.execv(program, [program, *fork.command[1:]])
    print(f"\nContinue it:\n  cd {shlex.quote(fork.cwd)} && {shlex.join(fork.command)}")
    return 0


def resolve_point(agent: AgentSession, target: Target, repo_dir: str, *, turn: int | None, at: str | None) -> Point:
    if turn is not None:
        return turn_point(agent, agent.turn(turn), repo_dir, target.relinked)
    chosen = agentsessions.find_step(agent, at) if at is not None else default_point(agent, target)
    if isinstance(chosen, Turn):
        return turn_point(agent, chosen, repo_dir, target.relinked)
    return step_point(agent, chosen, repo_dir, target.relinked)


def default_point(agent: AgentSession, target: Target) -> Turn | agentsessions.Step:
    """A commit's (or checkpoint session's) own step; else the turn of the segment or the last."""
    segment = agent.segment(target.segment_id) if target.segment_id else None
    if segment is not None and segment.session.get("kind") == "checkpoint" and segment.commit:
        step = next((s for s in agent.steps if s.kind == "commit" and s.ref == segment.commit), None)
        if step is not None:
            return step
    return agent.turn(default_turn(agent, target))


def turn_point(agent: AgentSession, turn: Turn, repo_dir: str, relinked: dict[str, str]) -> Point:
    commit = agentsessions.checkpoint_commit(turn, repo_dir, relinked)
    prompt = short(turn.prompt.replace("\n", " "), 60)
    what = f"after turn {turn.number} of {len(agent.turns)} ({prompt!r})"
    cut = agent.agent.format.cut_after_turn(agent.raw, turn.number)
    return Point(f"turn-{turn.number}", what, commit, cut, turn.before_first, turn, turn.checkpoint)


def step_point(agent: AgentSession, step: agentsessions.Step, repo_dir: str, relinked: dict[str, str]) -> Point:
    commit = agentsessions.step_commit(step, repo_dir, relinked)
    label = short(step.label.replace("\n", " "), 60)
    what = f"at step {step.short} ({step.kind}: {label!r}) in turn {step.turn} of {len(agent.turns)}"
    cut = agent.agent.format.cut_at(agent.raw, step.end)
    return Point(f"at-{step.short}", what, commit, cut, step.code_is_parent, code=step.code)


def replay_writes(agent: AgentSession, point: Point, repo_dir: str, worktree: str, cwd: str) -> Any:
    """Write into the worktree what the conversation wrote between the point's commit and the
    point itself: the commit's checkpoint ends where the replay starts (before the session's first
    commit: from its start)."""
    from sessionledger.commands import replay

    since = 0
    if not point.before_first and point.code:
        ends = [
            s.end
            for s in agent.segments
            if s.session.get("kind") == "checkpoint" and s.commit == point.code and s.end <= len(point.cut)
        ]
        since = max(ends, default=0)
    if since >= len(point.cut):
        return replay.Replayed()
    parse = agent.agent.format.parse
    before = {m.get("uuid") for m in parse(agent.raw[:since]).messages} if since else set()
    messages = [m for m in parse(point.cut).messages if m.get("uuid") not in before]
    root = os.path.realpath(repo_dir)
    cwd_from = _cwd_from(agent.agent.first_cwd(point.cut) or root, repo_dir)
    originals = original_files(point.cut[since:])
    return replay.replay(messages, worktree=worktree, cwd_from=cwd_from, cwd=cwd, originals=originals)


def default_turn(agent: AgentSession, target: Target) -> int:
    segment = agent.segment(target.segment_id) if target.segment_id else None
    if segment is None:
        if not agent.turns:
            raise CommandError(f"agent session {agent.id} has no prompt yet")
        return len(agent.turns)
    return agent.turn_of_segment(segment)


def session_file(
    ctx: Any, agent: AgentSession, cut: bytes, new_id: str, repo_dir: str, worktree: str
) -> tuple[Resumable, Any]:
    """The new session, written by the agent's adapter; resumed from the directory it names.

    The conversation's directories move into the worktree: under this repository's root they
    keep their place relative to it (a session started in `app/sub` resumes in `<worktree>/sub`);
    a conversation recorded elsewhere (another machine) is rooted at the worktree. The directory
    is the transcript's word, a teammate's: resolved, it must stay inside the worktree.
    """
    adapter = agent.agent
    root = os.path.realpath(repo_dir)
    old_cwd = adapter.first_cwd(cut) or root
    cwd_from = _cwd_from(old_cwd, repo_dir)
    cwd = worktree + old_cwd[len(root) :] if cwd_from == root else worktree
    cwd = confined(cwd, worktree, "the transcript's directory")
    cwd = cwd if os.path.isdir(cwd) else worktree
    try:
        return adapter.write_resumable(
            ResumeRequest(
                cut,
                session_id=new_id,
                old_id=agent.id,
                cwd=cwd,
                cwd_from=cwd_from,
                cwd_to=worktree,
                changed=agentsessions.changed_lines(agent, cut),
                fetch=agentsessions.fetcher(ctx.api, f"/projects/{ctx.slug}/agent-sessions/{agent.id}"),
                listing=agent.listing,
                forked_from=agent.id,
                recording=agent.raw,
            )
        )
    except CannotResume as exc:
        raise CommandError(str(exc)) from None


def _cwd_from(old: str, repo_dir: str) -> str:
    """The directory a conversation's paths are moved out of (see `session_file`)."""
    root = os.path.realpath(repo_dir)
    return root if old == root or old.startswith(root + os.sep) else old


def add_worktree(repo_dir: str, worktree: str, branch: str, commit: str) -> None:
    try:
        gitmeta.git(repo_dir, "worktree", "add", "--quiet", "-b", branch, worktree, commit)
    except gitmeta.GitError as exc:
        raise CommandError(f"cannot create the worktree: {str(exc).splitlines()[-1]}") from None


def remove_worktree(repo_dir: str, worktree: str, branch: str) -> None:
    """Undo `add_worktree` when the fork is refused after it."""
    gitmeta.git(repo_dir, "worktree", "remove", "--force", worktree, check=False)
    gitmeta.git(repo_dir, "branch", "-D", branch, check=False)


def _default_worktree(repo_dir: str, agent_id: str, point: str) -> str:
    root = os.path.realpath(repo_dir)
    return os.path.join(os.path.dirname(root), f"{os.path.basename(root)}-fork-{agent_id[:8]}-{point}")


def _free_path(path: str) -> str:
    candidate, n = path, 2
    while os.path.exists(candidate):
        candidate, n = f"{path}-{n}", n + 1
    return candidate


def _branch_exists(repo_dir: str, branch: str) -> bool:
    return bool(gitmeta.git(repo_dir, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", check=False).strip())


def _free_branch(repo_dir: str, branch: str) -> str:
    candidate, n = branch, 2
    while _branch_exists(repo_dir, candidate):
        candidate, n = f"{branch}-{n}", n + 1
    return candidate


def _check_free(repo_dir: str, worktree: str, branch: str) -> None:
    if os.path.exists(worktree) and (not os.path.isdir(worktree) or os.listdir(worktree)):
        raise CommandError(f"{worktree} already exists and is not empty: choose another --worktree")
    if _branch_exists(repo_dir, branch):
        raise CommandError(f"branch {branch} already exists: choose another --branch")
    if gitmeta.git(repo_dir, "check-ref-format", "--branch", branch, check=False).strip() != branch:
        raise CommandError(f"{branch!r} is not a valid branch name")


def _print(fork: Forked, repo_dir: str) -> None:
    subject = gitmeta.git(repo_dir, "log", "-1", "--format=%s", fork.commit, check=False).strip()
    print(terminal_safe(f"Forked agent session {fork.agent.id} {fork.point.what}."))
    print(f"  branch    {fork.branch} at {fork.commit[:10]} {short(subject, 50)}")
    print(f"  worktree  {fork.worktree}")
    print(f"  session   {fork.session_id}  ({fork.path})")
    for note in _notes(fork):
        print(f"  note      {terminal_safe(note)}")
    replayed = fork.replayed
    if replayed is not None and (replayed.written or replayed.not_reproduced or replayed.refused):
        files = ", ".join(replayed.written) or "none"
        print(
            terminal_safe(
                _one_line(f"  replayed  {len(replayed.written)} file(s) written since {fork.commit[:10]}: {files}")
            )
        )
        for restored in replayed.restored:
            note = f"  restored  {restored}: not in the commit; from the text the transcript's edit started from"
            print(terminal_safe(_one_line(note)))
        for change in replayed.not_reproduced:
            print(f"  not reproduced  {terminal_safe(_one_line(change))}")
        for refusal in replayed.refused:
            print(f"  refused   {terminal_safe(_one_line(f'{refusal.tool} {refusal.path}: {refusal.why}'))}")


def _notes(fork: Forked) -> list[str]:
    notes = []
    turn = fork.point.turn
    if fork.point.before_first:
        notes.append("this point came before the session's first commit: edits made until then were never committed")
    if turn is not None and fork.kept_turns > turn.number:
        notes.append(f"kept through turn {fork.kept_turns}: a tool call of turn {turn.number} was answered later")
    if fork.report.dropped_thinking:
        count = fork.report.dropped_thinking
        notes.append(f"dropped {count} thinking block(s) the redactor changed (their signature no longer verifies)")
    notes += fork.notes
    if fork.report.images:
        notes.append(f"replaced {fork.report.images} image(s) not kept at capture by a note")
    return notes


def _one_line(text: str) -> str:
    """A path from the transcript may hold a newline: escaped, it cannot forge a line of the report."""
    return text.replace("\n", "\\n")

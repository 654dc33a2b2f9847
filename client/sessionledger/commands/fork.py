"""`sessionledger fork <commit|session> [--turn N]`: continue a captured conversation from a turn.

Creates a branch and a worktree at the commit the code was at when turn N ended, and writes the
conversation cut after turn N as a new Claude Code session (fresh id) in the worktree's project
directory, so `claude -r <id>` there picks up with that turn's code and context. The original
session file, branch and working tree are not touched.

Without `--turn`: a commit forks at the end of the turn that made it, a session id at the end of
its segment's last turn, an agent session id at its last turn.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
import uuid
from dataclasses import dataclass, field

from sessionledger import agentsessions, formats, gitmeta, sessionfiles
from sessionledger.agentsessions import AgentSession, Target, Turn
from sessionledger.commands.common import CommandError, short
from sessionledger.commands.turns import open_target, repo_root
from sessionledger.formats.resume import ResumeReport, first_cwd, rewrite_for_resume


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("fork", help="branch + worktree at a turn's commit, with the conversation up to that turn")
    parser.add_argument("ref", help="commit, session id or agent session id")
    parser.add_argument("--turn", type=int, help="keep turns 1..N (default: the turn of the commit or session)")
    parser.add_argument("--worktree", help="where to create the worktree (default: next to the repository)")
    parser.add_argument("--branch", help="name of the new branch (default: fork/<session>-turn-<N>)")
    parser.add_argument("--exec", action="store_true", help="start `claude -r <new id>` in the worktree")
    parser.add_argument("--allow-gaps", action="store_true", help="fork even if segments of the session are missing")
    parser.add_argument("--project", help="project slug (default: from the git remote)")
    parser.set_defaults(func=run)


@dataclass
class Forked:
    agent: AgentSession
    turn: Turn
    commit: str
    branch: str
    worktree: str
    session_id: str
    cwd: str = ""
    path: str = ""
    kept_turns: int = 0
    closed: int = 0
    report: ResumeReport = field(default_factory=ResumeReport)


def run(options: argparse.Namespace) -> int:
    if options.turn is not None and options.turn < 1:
        raise CommandError("--turn counts from 1 (the first prompt)")
    claude = shutil.which("claude") if options.exec else None
    if options.exec and not claude:
        raise CommandError("--exec needs Claude Code's `claude` on PATH")
    if repo_root(os.getcwd()) is None:
        raise CommandError("run fork inside the git repository the session belongs to (it creates a worktree)")
    ctx = open_target(options.ref, options.project)
    assert ctx.repo_dir is not None
    agent = agentsessions.load(ctx.api, ctx.slug, ctx.target.agent_session_id, allow_gaps=options.allow_gaps)
    turn = agent.turn(options.turn or default_turn(agent, ctx.target))
    commit = agentsessions.checkpoint_commit(turn, ctx.repo_dir, ctx.target.relinked)
    worktree = os.path.realpath(options.worktree or _free_path(_default_worktree(ctx.repo_dir, agent.id, turn.number)))
    branch = options.branch or _free_branch(ctx.repo_dir, f"fork/{agent.id[:8]}-turn-{turn.number}")
    _check_free(ctx.repo_dir, worktree, branch)
    fork = Forked(agent, turn, commit, branch, worktree, str(uuid.uuid4()))
    cut = formats.cut_after_turn(agent.raw, turn.number)
    fork.kept_turns = len(formats.turn_starts(cut))
    add_worktree(ctx.repo_dir, worktree, branch, commit)
    data, fork.cwd, fork.report = session_file(agent, cut, fork.session_id, ctx.repo_dir, worktree)
    data, fork.closed = sessionfiles.finish(data, agent.id, fork.cwd, fork.session_id)
    fork.path = sessionfiles.write_all(
        ctx.api,
        f"/projects/{ctx.slug}/agent-sessions/{agent.id}",
        agent.listing,
        cwd=fork.cwd,
        session_id=fork.session_id,
        data=data,
        rewrite=sessionfiles.subagent_rewriter(fork.session_id, agent.id, fork.cwd, _cwd_from(cut, ctx.repo_dir)),
    ).session
    _print(fork, ctx.repo_dir)
    if claude:
        sys.stdout.flush()
        os.chdir(fork.cwd)
        os.execv(claude, [claude, "-r", fork.session_id])
    print(f"\nContinue it:\n  cd {shlex.quote(fork.cwd)} && claude -r {fork.session_id}")
    return 0


def default_turn(agent: AgentSession, target: Target) -> int:
    segment = agent.segment(target.segment_id) if target.segment_id else None
    if segment is None:
        if not agent.turns:
            raise CommandError(f"agent session {agent.id} has no prompt yet")
        return len(agent.turns)
    return agent.turn_of_segment(segment)


def session_file(
    agent: AgentSession, cut: bytes, new_id: str, repo_dir: str, worktree: str
) -> tuple[bytes, str, ResumeReport]:
    """(file bytes, the directory to resume from, what was changed).

    The conversation's directories move into the worktree: under this repository's root they
    keep their place relative to it (a session started in `app/sub` resumes in `<worktree>/sub`);
    a conversation recorded elsewhere (another machine) is rooted at the worktree.
    """
    root = os.path.realpath(repo_dir)
    old_cwd = first_cwd(cut) or root
    cwd_from = _cwd_from(cut, repo_dir)
    cwd = worktree + old_cwd[len(root) :] if cwd_from == root else worktree
    changed = agentsessions.changed_lines(agent, cut)
    data, report = rewrite_for_resume(cut, session_id=new_id, cwd_from=cwd_from, cwd_to=worktree, changed=changed)
    return data, (cwd if os.path.isdir(cwd) else worktree), report


def _cwd_from(cut: bytes, repo_dir: str) -> str:
    """The directory a conversation's paths are moved out of (see `session_file`)."""
    root = os.path.realpath(repo_dir)
    old = first_cwd(cut) or root
    return root if old == root or old.startswith(root + os.sep) else old


def add_worktree(repo_dir: str, worktree: str, branch: str, commit: str) -> None:
    try:
        gitmeta.git(repo_dir, "worktree", "add", "--quiet", "-b", branch, worktree, commit)
    except gitmeta.GitError as exc:
        raise CommandError(f"cannot create the worktree: {str(exc).splitlines()[-1]}") from None


def _default_worktree(repo_dir: str, agent_id: str, turn: int) -> str:
    root = os.path.realpath(repo_dir)
    return os.path.join(os.path.dirname(root), f"{os.path.basename(root)}-fork-{agent_id[:8]}-t{turn}")


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
    number, total = fork.turn.number, len(fork.agent.turns)
    prompt = short(fork.turn.prompt.replace("\n", " "), 60)
    print(f"Forked agent session {fork.agent.id} after turn {number} of {total} ({prompt!r}).")
    print(f"  branch    {fork.branch} at {fork.commit[:10]} {short(subject, 50)}")
    print(f"  worktree  {fork.worktree}")
    print(f"  session   {fork.session_id}  ({fork.path})")
    for note in _notes(fork):
        print(f"  note      {note}")


def _notes(fork: Forked) -> list[str]:
    notes = []
    if fork.turn.before_first:
        notes.append("this turn ended before the session's first commit: edits it made were never committed")
    if fork.kept_turns > fork.turn.number:
        notes.append(f"kept through turn {fork.kept_turns}: a tool call of turn {fork.turn.number} was answered later")
    if fork.report.dropped_thinking:
        count = fork.report.dropped_thinking
        notes.append(f"dropped {count} thinking block(s) the redactor changed (their signature no longer verifies)")
    if fork.closed:
        notes.append(f"answered {fork.closed} tool call(s) the capture ended on (their result was never captured)")
    if fork.report.images:
        notes.append(f"replaced {fork.report.images} image(s) not kept at capture by a note")
    return notes

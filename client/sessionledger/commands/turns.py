"""`sessionledger turns [commit|session] [--steps]`: the steps of a captured agent session, one per
line — each turn (number, age, the commit the code was at when it ended, what it committed,
prompt) and under it each commit captured inside it; with `--steps` each assistant tool call too.
Every row starts with what `fork --at` and `rewind` take: a turn number, a commit, a message id.

On a terminal with fzf installed the list opens in fzf and the chosen step's `fork` command is
printed; otherwise (or with `--list`) it is a numbered list. Without an argument: the agent
session behind HEAD, else the current agent conversation of this directory (any agent).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

from sessionledger import agents, transcripts
from sessionledger.api import Client
from sessionledger.commands import agentsessions
from sessionledger.commands.agentsessions import AgentSession, Step, Target, Turn
from sessionledger.commands.common import (
    CommandError,
    age,
    client,
    load_config,
    print_json,
    project_for_cwd,
    short,
    terminal_safe,
)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("turns", help="list the turns of a captured conversation (to pick one to fork)")
    parser.add_argument("ref", nargs="?", help="commit, session id or agent session id (default: HEAD's)")
    parser.add_argument("--project", help="project slug (default: from the git remote)")
    parser.add_argument("--steps", action="store_true", help="also list every tool call (a step to fork at)")
    parser.add_argument("--list", action="store_true", help="print the list even when fzf is installed")
    parser.add_argument("--json", action="store_true", help="print the turns as JSON")
    parser.set_defaults(func=run)


@dataclass
class Context:
    api: Client
    slug: str
    repo_dir: str | None
    target: Target


def open_target(ref: str | None, project: str | None) -> Context:
    """Config, API client, project and what `ref` names (the commands that work on a session)."""
    config = load_config()
    api = client(config)
    slug = project_for_cwd(config, api, project)
    repo_dir = repo_root(os.getcwd())
    if ref:
        return Context(api, slug, repo_dir, agentsessions.resolve(api, slug, ref, repo_dir))
    return Context(api, slug, repo_dir, _default_target(api, slug, repo_dir))


def repo_root(cwd: str) -> str | None:
    from sessionledger.gitrefs import find_repo

    repo = find_repo(cwd)
    return repo.worktree if repo else None


def _default_target(api: Client, slug: str, repo_dir: str | None) -> Target:
    """HEAD's session, else the conversation an agent is having (or last had) here."""
    if repo_dir and agentsessions.local_commit(repo_dir, "HEAD"):
        try:
            return agentsessions.resolve(api, slug, "HEAD", repo_dir)
        except CommandError:
            pass
    current = agents.current(os.getcwd())
    if current is None:
        raise CommandError("no captured session for HEAD and no agent conversation here: name a commit or session")
    agent, path = current
    return agentsessions.resolve(api, slug, agent.session_id(path), repo_dir)


def run(options: argparse.Namespace) -> int:
    ctx = open_target(options.ref, options.project)
    agent = agentsessions.load(ctx.api, ctx.slug, ctx.target.agent_session_id, allow_gaps=True)
    if agent.gaps:
        gaps = agentsessions.gap_message(agent.id, agent.gaps).split(":")[0]
        print(f"warning: {terminal_safe(gaps)}", file=sys.stderr)
    if not agent.turns:
        raise CommandError(f"agent session {agent.id} has no prompt yet")
    if options.json:
        print_json([turn_json(t, agent, options.steps) for t in agent.turns])
        return 0
    lines = render(agent, steps=options.steps)
    fzf = shutil.which("fzf")
    if fzf and not options.list and sys.stdout.isatty() and sys.stdin.isatty():
        return pick(fzf, agent, lines)
    commits = sum(1 for s in agent.steps if s.kind == "commit")
    name = terminal_safe(agent.id)
    print(f"Agent session {name} — {len(agent.turns)} turns, {commits} commit{'s' * (commits != 1)}")
    print("\n".join(lines))
    print(f"\nFork at one: sessionledger fork {name} --at STEP  (a turn number, a commit, or a message id)")
    return 0


def render(agent: AgentSession, *, steps: bool = False) -> list[str]:
    rows = [["step", "when", "code at", "committed", "prompt / step"]]
    for turn in agent.turns:
        rows.append([str(turn.number), _age(turn.timestamp), _commit(turn), _stat(turn.made), _text(turn.prompt, 72)])
        for step in agent.steps:
            if step.turn == turn.number and (step.kind == "commit" or (steps and step.kind == "tool")):
                rows.append(_step_row(step))
    rows = [[terminal_safe(cell) for cell in row] for row in rows]  # before the widths are measured
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return ["  ".join([*(c.ljust(w) for c, w in zip(r[:4], widths, strict=True)), r[4]]).rstrip() for r in rows]


def _step_row(step: Step) -> list[str]:
    code = (step.code or "-")[:8] + ("^" if step.code_is_parent else "")
    if step.kind == "commit":
        made = _stat([step.session] if step.session else [])
        return [f"  {step.short}", _age(step.timestamp), code, made, f"commit: {_text(step.label, 64)}"]
    return [f"  {step.short}", _age(step.timestamp), code, "·", _text(step.label, 72)]


def _text(text: str, width: int) -> str:
    return short(text.replace("\n", " "), width)


def _age(stamp: str | None) -> str:
    when = transcripts.iso_to_epoch(stamp) if isinstance(stamp, str) else None
    return age(when)


def _commit(turn: Turn) -> str:
    if not turn.checkpoint:
        return "-"
    return turn.checkpoint[:8] + ("^" if turn.before_first else "")


def _stat(made: list[dict]) -> str:
    if not made:
        return "·"
    files = insertions = deletions = 0
    for session in made:
        stat = session.get("diff_stat") or {}
        files += int(stat.get("files") or 0)
        insertions += int(stat.get("insertions") or 0)
        deletions += int(stat.get("deletions") or 0)
    return f"{files} file{'s' * (files != 1)} +{insertions} -{deletions}"


def turn_json(turn: Turn, agent: AgentSession | None = None, tools: bool = False) -> dict:
    steps = [s for s in agent.steps if s.turn == turn.number] if agent is not None else []
    return {
        "turn": turn.number,
        "timestamp": turn.timestamp,
        "prompt": turn.prompt,
        "checkpoint": turn.checkpoint,
        "checkpoint_is_parent": turn.before_first,
        "commits": [
            {"commit": s.get("commit_hash"), "diff_stat": s.get("diff_stat"), "session": s.get("id")} for s in turn.made
        ],
        "steps": [step_json(s) for s in steps if s.kind != "tool" or tools],
    }


def step_json(step: Step) -> dict:
    return {
        "kind": step.kind,
        "step": step.ref,
        "label": step.label,
        "timestamp": step.timestamp,
        "code": step.code,
        "code_is_parent": step.code_is_parent,
    }


def pick(fzf: str, agent: AgentSession, lines: list[str]) -> int:
    chosen = subprocess.run(
        [
            fzf,
            "--no-sort",
            "--header-lines",
            "1",
            "--prompt",
            "fork at> ",
            "--header",
            f"agent session {terminal_safe(agent.id)}",
        ],
        input="\n".join(lines),
        capture_output=False,
        stdout=subprocess.PIPE,
        text=True,
        check=False,
    )
    if chosen.returncode != 0 or not chosen.stdout.strip():
        return 130 if chosen.returncode == 130 else 1
    step = chosen.stdout.split()[0]
    print(terminal_safe(f"sessionledger fork {agent.id} --at {step}"))
    return 0

"""`sessionledger turns [commit|session]`: the turns of a captured agent session, one per line —
number, age, the commit the code was at when the turn ended, what that turn committed, prompt.

On a terminal with fzf installed the list opens in fzf and the chosen turn's `fork` command is
printed; otherwise (or with `--list`) it is a numbered list. Without an argument: the agent
session behind HEAD, else the current Claude Code conversation of this directory.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

from sessionledger import agentsessions, transcripts
from sessionledger.agentsessions import AgentSession, Target, Turn
from sessionledger.api import Client
from sessionledger.commands.common import CommandError, age, client, load_config, print_json, project_for_cwd, short


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("turns", help="list the turns of a captured conversation (to pick one to fork)")
    parser.add_argument("ref", nargs="?", help="commit, session id or agent session id (default: HEAD's)")
    parser.add_argument("--project", help="project slug (default: from the git remote)")
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
    """HEAD's session, else the conversation Claude Code is having (or last had) here."""
    if repo_dir and agentsessions.local_commit(repo_dir, "HEAD"):
        try:
            return agentsessions.resolve(api, slug, "HEAD", repo_dir)
        except CommandError:
            pass
    current = transcripts.find_current(os.getcwd())
    if current is None:
        raise CommandError(
            "no captured session for HEAD and no Claude Code conversation here: name a commit or session"
        )
    return agentsessions.resolve(api, slug, transcripts.session_id_of(current), repo_dir)


def run(options: argparse.Namespace) -> int:
    ctx = open_target(options.ref, options.project)
    agent = agentsessions.load(ctx.api, ctx.slug, ctx.target.agent_session_id, allow_gaps=True)
    if agent.gaps:
        print(f"warning: {agentsessions.gap_message(agent.id, agent.gaps).split(':')[0]}", file=sys.stderr)
    if not agent.turns:
        raise CommandError(f"agent session {agent.id} has no prompt yet")
    if options.json:
        print_json([turn_json(t) for t in agent.turns])
        return 0
    lines = render(agent)
    fzf = shutil.which("fzf")
    if fzf and not options.list and sys.stdout.isatty() and sys.stdin.isatty():
        return pick(fzf, agent, lines)
    print(f"Agent session {agent.id} — {len(agent.turns)} turns")
    print("\n".join(lines))
    print(f"\nFork one: sessionledger fork {agent.id} --turn N")
    return 0


def render(agent: AgentSession) -> list[str]:
    rows = [
        [str(t.number), _age(t.timestamp), _commit(t), _stat(t), short(t.prompt.replace("\n", " "), 72)]
        for t in agent.turns
    ]
    rows.insert(0, ["#", "when", "code at", "committed", "prompt"])
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return [
        "  ".join([r[0].rjust(widths[0]), *(c.ljust(w) for c, w in zip(r[1:4], widths[1:], strict=True)), r[4]])
        for r in rows
    ]


def _age(stamp: str | None) -> str:
    when = transcripts.iso_to_epoch(stamp) if stamp else None
    return age(when)


def _commit(turn: Turn) -> str:
    if not turn.checkpoint:
        return "-"
    return turn.checkpoint[:8] + ("^" if turn.before_first else "")


def _stat(turn: Turn) -> str:
    if not turn.made:
        return "·"
    files = insertions = deletions = 0
    for session in turn.made:
        stat = session.get("diff_stat") or {}
        files += int(stat.get("files") or 0)
        insertions += int(stat.get("insertions") or 0)
        deletions += int(stat.get("deletions") or 0)
    return f"{files} file{'s' * (files != 1)} +{insertions} -{deletions}"


def turn_json(turn: Turn) -> dict:
    return {
        "turn": turn.number,
        "timestamp": turn.timestamp,
        "prompt": turn.prompt,
        "checkpoint": turn.checkpoint,
        "checkpoint_is_parent": turn.before_first,
        "commits": [
            {"commit": s.get("commit_hash"), "diff_stat": s.get("diff_stat"), "session": s.get("id")} for s in turn.made
        ],
    }


def pick(fzf: str, agent: AgentSession, lines: list[str]) -> int:
    chosen = subprocess.run(
        [
            fzf,
            "--no-sort",
            "--header-lines",
            "1",
            "--prompt",
            "fork after turn> ",
            "--header",
            f"agent session {agent.id}",
        ],
        input="\n".join(lines),
        capture_output=False,
        stdout=subprocess.PIPE,
        text=True,
        check=False,
    )
    if chosen.returncode != 0 or not chosen.stdout.strip():
        return 130 if chosen.returncode == 130 else 1
    number = chosen.stdout.split()[0]
    print(f"sessionledger fork {agent.id} --turn {number}")
    return 0

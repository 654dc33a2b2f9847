"""`sessionledger restore <agent-session-id>`: write a captured conversation back as a session file
of the agent that recorded it — the safety net for transcripts the agent has cleaned up (Claude
Code and Gemini CLI: 30 days by default).

The stitched transcript (every captured segment, in order) goes where the agent keeps its
sessions, through its adapter (`agent.write_resumable`): Claude Code's
`<claude dir>/projects/<encoded cwd>/<id>.jsonl` with its sub-agent transcripts and saved tool
outputs beside it (a capture that ended on a tool call whose result was never written gets that
result as a note, so `claude -r` accepts the file); a Codex CLI rollout in today's date folder
(`codex resume <id>`); a Gemini CLI JSONL recording in the project's chats folder
(`gemini --resume <id>`). By default under a fresh session id: when that
session is continued, its captures then start a new agent session from byte 0 instead of mixing
the restored file's offsets (redaction and slimming change sizes) into the original's.
`--same-id` keeps the original id (e.g. for tools that look it up by id). A segment that is
missing refuses the restore (`--allow-gaps` writes what there is).
"""

from __future__ import annotations

import argparse
import os
import shlex
import uuid

from sessionledger.agents.base import CannotResume, ResumeRequest
from sessionledger.commands import agentsessions
from sessionledger.commands.common import CommandError, confined, terminal_safe
from sessionledger.commands.turns import open_target


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("restore", help="write a captured conversation back where its agent can resume it")
    parser.add_argument("agent_session_id", help="the agent's session id (or a commit / captured session id)")
    parser.add_argument("--cwd", help="the directory to resume it from (default: where it was recorded, if it exists)")
    parser.add_argument("--same-id", action="store_true", help="keep the original session id instead of a new one")
    parser.add_argument("--force", action="store_true", help="with --same-id: overwrite an existing session file")
    parser.add_argument("--allow-gaps", action="store_true", help="restore even if segments are missing")
    parser.add_argument("--project", help="project slug (default: from the git remote)")
    parser.set_defaults(func=run)


def run(options: argparse.Namespace) -> int:
    ctx = open_target(options.agent_session_id, options.project)
    agent = agentsessions.load(ctx.api, ctx.slug, ctx.target.agent_session_id, allow_gaps=options.allow_gaps)
    adapter = agent.agent
    if (why := adapter.cannot_resume(agent.raw)) is not None:
        raise CommandError(why)
    recorded = adapter.first_cwd(agent.raw)
    cwd = os.path.realpath(options.cwd) if options.cwd else _default_cwd(recorded, ctx.repo_dir)
    if options.cwd and not os.path.isdir(cwd):
        raise CommandError(f"--cwd {options.cwd} is not a directory")
    if options.same_id and (agent.id in ("", ".", "..") or "/" in agent.id or os.sep in agent.id):
        raise CommandError(f"the server's agent session id {agent.id!r} cannot name a file: restore without --same-id")
    session_id = agent.id if options.same_id else str(uuid.uuid4())
    cwd_from = recorded if recorded and recorded != cwd else None
    base = f"/projects/{ctx.slug}/agent-sessions/{agent.id}"
    try:
        written, report = adapter.write_resumable(
            ResumeRequest(
                agent.raw,
                session_id=session_id,
                old_id=agent.id,
                cwd=cwd,
                cwd_from=cwd_from,
                changed=agentsessions.changed_lines(agent),
                fetch=agentsessions.fetcher(ctx.api, base),
                listing=agent.listing,
                replace=options.force or not options.same_id,
            )
        )
    except CannotResume as exc:
        raise CommandError(str(exc)) from None
    if written.unchanged:
        print(f"Already restored: {written.path}")
        return 0
    turns = len(agent.turns)
    print(
        f"Restored agent session {agent.id}: {len(agent.segments)} segments, {turns} turns, {len(agent.raw):,} bytes."
    )
    print(f"  file      {written.path}")
    if written.files:
        print(f"  beside it {len(written.files)} file(s): sub-agent transcripts and saved tool outputs")
    for note in written.notes:
        print(f"  note      {terminal_safe(note)}")
    if report.dropped_thinking:
        print(f"  note      dropped {report.dropped_thinking} thinking block(s) the redactor changed")
    if agent.gaps:
        print(f"  warning   {len(agent.gaps)} gap(s): parts of the conversation were never captured")
    print(f"\nResume it:\n  cd {shlex.quote(cwd)} && {shlex.join(written.command)}")
    return 0


def _default_cwd(recorded: str | None, repo_dir: str | None) -> str:
    """Where it was recorded when that directory exists here, else the current directory. The
    recorded directory is a teammate's word: it must lie inside the repository restore runs in
    (outside any repository: the current directory), else `--cwd` has to say where."""
    here = os.path.realpath(os.getcwd())
    if recorded and os.path.isdir(recorded):
        try:
            return confined(recorded, repo_dir or here, "the transcript's directory")
        except CommandError as exc:
            raise CommandError(f"{exc}; choose where to resume it with --cwd") from None
    return here

"""`sessionledger restore <agent-session-id>`: write a captured conversation back as a Claude Code
session file — the safety net for transcripts Claude Code has cleaned up (30 days by default).

The stitched transcript (every captured segment, in order) goes to
`<claude dir>/projects/<encoded cwd>/<id>.jsonl`, with its sub-agent transcripts (in the layout
they were captured in) and the large tool outputs of `<id>/tool-results/` beside it; a capture
that ended on a tool call whose result was never written gets that result as a note, so
`claude -r` accepts the file. By default under a fresh session id: when that
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

from sessionledger import agentsessions, sessionfiles, transcripts
from sessionledger.commands.common import CommandError
from sessionledger.commands.turns import open_target
from sessionledger.formats.resume import first_cwd, rewrite_for_resume


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("restore", help="write a captured conversation back where Claude Code can resume it")
    parser.add_argument("agent_session_id", help="the Claude Code session id (or a commit / captured session id)")
    parser.add_argument("--cwd", help="the directory to resume it from (default: where it was recorded, if it exists)")
    parser.add_argument("--same-id", action="store_true", help="keep the original session id instead of a new one")
    parser.add_argument("--force", action="store_true", help="with --same-id: overwrite an existing session file")
    parser.add_argument("--allow-gaps", action="store_true", help="restore even if segments are missing")
    parser.add_argument("--project", help="project slug (default: from the git remote)")
    parser.set_defaults(func=run)


def run(options: argparse.Namespace) -> int:
    ctx = open_target(options.agent_session_id, options.project)
    agent = agentsessions.load(ctx.api, ctx.slug, ctx.target.agent_session_id, allow_gaps=options.allow_gaps)
    recorded = first_cwd(agent.raw)
    cwd = os.path.realpath(options.cwd) if options.cwd else _default_cwd(recorded)
    if options.cwd and not os.path.isdir(cwd):
        raise CommandError(f"--cwd {options.cwd} is not a directory")
    session_id = agent.id if options.same_id else str(uuid.uuid4())
    cwd_from = recorded if recorded and recorded != cwd else None
    data, report = rewrite_for_resume(
        agent.raw, session_id=session_id, cwd_from=cwd_from, cwd_to=cwd, changed=agentsessions.changed_lines(agent)
    )
    data, closed = sessionfiles.finish(data, agent.id, cwd, session_id)
    target = os.path.join(transcripts.project_dir(cwd), session_id + transcripts.SUFFIX)
    if options.same_id and os.path.exists(target):
        if _same(target, data):
            print(f"Already restored: {target}")
            return 0
        if not options.force:
            raise CommandError(f"{target} exists (Claude Code still has this session); --force replaces it")
    written = sessionfiles.write_all(
        ctx.api,
        f"/projects/{ctx.slug}/agent-sessions/{agent.id}",
        agent.listing,
        cwd=cwd,
        session_id=session_id,
        data=data,
        rewrite=sessionfiles.subagent_rewriter(session_id, agent.id, cwd, cwd_from),
    )
    turns = len(agent.turns)
    print(f"Restored agent session {agent.id}: {len(agent.segments)} segments, {turns} turns, {len(data):,} bytes.")
    print(f"  file      {written.session}")
    if written.files:
        print(f"  beside it {len(written.files)} file(s): sub-agent transcripts and saved tool outputs")
    if closed:
        print(f"  note      answered {closed} tool call(s) the capture ended on (their result was never captured)")
    for name in written.moved_agents:
        print(f"  note      {name} went into {session_id}/subagents/: the original's file of that name is still there")
    if report.dropped_thinking:
        print(f"  note      dropped {report.dropped_thinking} thinking block(s) the redactor changed")
    if agent.gaps:
        print(f"  warning   {len(agent.gaps)} gap(s): parts of the conversation were never captured")
    print(f"\nResume it:\n  cd {shlex.quote(cwd)} && claude -r {session_id}")
    return 0


def _default_cwd(recorded: str | None) -> str:
    """Where it was recorded when that directory exists here, else the current directory."""
    if recorded and os.path.isdir(recorded):
        return recorded
    return os.path.realpath(os.getcwd())


def _same(path: str, data: bytes) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read() == data
    except OSError:
        return False

"""`sessionledger import [--since DATE] [--agent NAME]`: backfill this repository's existing agent
transcripts (Claude Code, Codex CLI, Gemini CLI).

Each transcript an agent's adapter finds recorded in one of the repository's working trees
is cut at the commits made during it (see `backfill`) and queued like a hook's capture, then the
queue is uploaded with a progress bar. Idempotent: segments the server already has (same agent
session and byte range) or that wait in the queue are not queued again, and a repeated upload
carries the same Idempotency-Key. Transcripts the hooks have been capturing are left to them:
their segments were cut elsewhere, and importing would overlap them.
"""

from __future__ import annotations

import argparse
import os
import time
from datetime import datetime

from sessionledger import agents, backfill, queue, state
from sessionledger.agents.base import Agent
from sessionledger.api import ApiError, Client
from sessionledger.commands.common import (
    CommandError,
    ProgressBar,
    api_error,
    client,
    load_config,
    project_for_cwd,
    short,
)
from sessionledger.intent import Intent
from sessionledger.prepare import idempotency_key


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("import", help="backfill this repository's existing agent transcripts")
    parser.add_argument("--since", help="only transcripts written since this date (e.g. 2026-01-31)")
    parser.add_argument("--agent", choices=sorted(agents.AGENTS), help="only this agent's transcripts")
    parser.add_argument("--dry-run", action="store_true", help="show the segments without queueing them")
    parser.add_argument("--project", help="project slug (default: from the git remote)")
    parser.set_defaults(func=run)


def run(options: argparse.Namespace) -> int:
    since = parse_since(options.since) if options.since else None
    root = _root()
    config = load_config()
    api = client(config)
    slug = project_for_cwd(config, api, options.project)
    trees = backfill.worktrees(root)
    found = [
        (a, p, cwd)
        for a, p, cwd in backfill.repo_transcripts(trees, options.agent)
        if backfill.modified_since(p, since)
    ]
    if not found:
        which = agents.get(options.agent).display_name if options.agent else "agent"
        print(f"No {which} transcripts of {root}{' since ' + options.since if options.since else ''} to import.")
        return 0
    plans = _plan_all(api, slug, root, found)
    intents = [intent for plan, _ in plans for intent in plan.intents]
    _print_plan(plans)
    if not intents:
        print(f"Nothing new to import ({len(found)} transcript{'s' * (len(found) != 1)} looked at).")
        return 0
    if options.dry_run:
        print(f"{len(intents)} segment(s) would be imported; --dry-run: nothing queued.")
        return 0
    return _upload(intents, slug)


def parse_since(text: str) -> float:
    """An ISO date or date-time (without a zone: local time) as epoch seconds."""
    try:
        return datetime.fromisoformat(text.strip().replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise CommandError(f"--since: not a date: {text!r} (e.g. 2026-01-31 or 2026-01-31T14:00)") from None


def _root() -> str:
    from sessionledger import gitmeta

    try:
        return gitmeta.git(os.getcwd(), "rev-parse", "--show-toplevel").strip()
    except gitmeta.GitError:
        raise CommandError("not inside a git repository") from None


def _plan_all(
    api: Client, slug: str, root: str, found: list[tuple[Agent, str, str]]
) -> list[tuple[backfill.Plan, int]]:
    """(plan with only the new intents, how many segments were already there) per transcript."""
    known = state.load()["transcripts"]
    queued = {idempotency_key(entry.intent) for entry in queue.entries()}
    bar = ProgressBar(len(found))
    plans = []
    try:
        for agent, path, cwd in found:
            plan = _plan_one(api, slug, root, agent, path, cwd, known.get(path) or {}, queued)
            plans.append(plan)
            bar.step(f"read {os.path.basename(path)}")
    except ApiError as exc:
        raise api_error(exc) from None
    finally:
        bar.close()
    return plans


def _plan_one(
    api: Client, slug: str, root: str, agent: Agent, path: str, cwd: str, record: dict, queued: set[str]
) -> tuple[backfill.Plan, int]:
    if record.get("offset") and not record.get("imported"):
        plan = backfill.Plan(path, os.path.basename(path))
        plan.note = "captured by the hooks"
        return plan, 0
    resume = backfill.Resume(int(record.get("offset") or 0), dict(record.get("subagents") or {}))
    try:
        plan = backfill.plan_transcript(path, cwd, root, resume, agent)
    except OSError as exc:
        plan = backfill.Plan(path, os.path.basename(path))
        plan.note = f"unreadable: {exc}"
        return plan, 0
    existing = _server_ranges(api, slug, plan.session_id)
    planned = {(i.start_offset, i.end_offset) for i in plan.intents}
    if any(r not in planned and r[1] > resume.offset for r in existing):
        plan.intents, plan.note = [], "already captured (by the hooks or on another machine)"
        return plan, len(existing)
    plan.intents = [
        i for i in plan.intents if (i.start_offset, i.end_offset) not in existing and idempotency_key(i) not in queued
    ]
    return plan, len(existing)


def _server_ranges(api: Client, slug: str, agent_session_id: str) -> set[tuple[int, int]]:
    try:
        listing = api.get(f"/projects/{slug}/agent-sessions/{agent_session_id}")
    except ApiError as exc:
        if exc.status == 404:
            return set()
        raise
    return {(s.get("start_offset") or 0, s.get("end_offset") or 0) for s in listing.get("segments") or []}


def _print_plan(plans: list[tuple[backfill.Plan, int]]) -> None:
    for plan, existing in plans:
        name = os.path.basename(plan.transcript)
        if plan.intents:
            kinds = ", ".join(_describe(i) for i in plan.intents)
            print(f"  {name}: {len(plan.intents)} new segment(s): {short(kinds, 90)}")
        elif existing:
            print(f"  {name}: all {existing} segment(s) already on the server")
        elif plan.note:
            print(f"  {name}: skipped, {plan.note}")


def _describe(intent: Intent) -> str:
    return f"{intent.kind} {(intent.commit_hash or '')[:8]}"


def _remember(intents: list[Intent]) -> None:
    """Record how far each transcript is captured, as a hook would: if the conversation goes on
    with the hooks installed, they capture only what follows (and a later import resumes there)."""
    with state.transaction() as txn:
        for intent in intents:
            record = txn.transcript(intent.transcript)
            if intent.end_offset > record["offset"]:
                record["offset"], record["captured_at"], record["imported"] = intent.end_offset, time.time(), True
                record["session_id"] = intent.agent_session_id or ""
            for sub in intent.subagents:
                record["subagents"][sub.path] = max(sub.end_offset, record["subagents"].get(sub.path, 0))


def _upload(intents: list[Intent], slug: str) -> int:
    from sessionledger.uploader import Mode
    from sessionledger.uploader import run as upload

    entries = [queue.enqueue(intent) for intent in intents]
    _remember(intents)
    ours = {entry.id for entry in entries}
    bar = ProgressBar(len(queue.entries()))
    summary = upload(Mode.SYNC, progress=lambda entry, outcome: bar.step(f"{entry.describe()} {outcome}"))
    bar.close()
    left = [entry for entry in queue.entries() if entry.id in ours]
    sent = len(entries) - len(left)
    print(f"Imported {sent} segment{'s' * (sent != 1)} into {slug}.")
    if summary.busy or left:
        print(
            f"{len(left)} still queued: `sessionledger sync` uploads them (`sessionledger status` says why they wait)."
        )
        return 1
    return 0

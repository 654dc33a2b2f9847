"""`sessionledger capture`: capture the current conversation segment by hand.

For what the hooks could not see — a commit made in another terminal (`--commit`), a task
tracked outside beads (`--task … --status …`) — or simply "save what we have" (kind `manual`,
linked to HEAD). The segment goes through the same queue as a hook's, then is uploaded in the
foreground so the command can print where it landed.
"""

from __future__ import annotations

import argparse
import os

from sessionledger import agents, gitmeta, gitrefs, log, queue, state, tasks
from sessionledger.commands.common import CommandError
from sessionledger.segments import Request
from sessionledger.segments import capture as capture_segment


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("capture", help="capture the conversation since the last capture now")
    parser.add_argument("--commit", help="link it to this commit as its checkpoint (default: HEAD, kind manual)")
    parser.add_argument("--task", help="capture it as this task's session")
    parser.add_argument("--status", choices=tasks.STATUSES, default="complete", help="final status of --task")
    add_transcript_options(parser)
    parser.add_argument("--no-upload", action="store_true", help="only queue it; the next sync uploads it")
    parser.set_defaults(func=run)


def add_transcript_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--transcript", help="the agent's transcript file (default: the current session's)")
    parser.add_argument("--session", help="the agent's session id (finds its transcript)")


def run(options: argparse.Namespace) -> int:
    transcript = find_transcript(options)
    cwd = os.getcwd()
    if options.task:
        entry = tasks.finish(options.task, options.status, transcript, cwd)
    else:
        entry = _capture_commit(transcript, cwd, options.commit)
    if entry is None:
        print(f"Nothing new to capture in {transcript}.")
        return 0
    print(f"Captured {entry.describe()} from {transcript}.")
    return 0 if options.no_upload else upload_now(entry)


def find_transcript(options: argparse.Namespace) -> str:
    if options.transcript:
        if not os.path.isfile(options.transcript):
            raise CommandError(f"no transcript at {options.transcript}")
        return os.path.abspath(options.transcript)
    found = agents.find_by_session(options.session) if options.session else agents.current(os.getcwd())
    if not found:
        where = f"session {options.session}" if options.session else f"{os.getcwd()} (or its parents)"
        raise CommandError(f"no agent transcript found for {where}; pass --transcript PATH")
    return found[1]


def _capture_commit(transcript: str, cwd: str, commit: str | None) -> queue.Entry | None:
    repo = gitrefs.find_repo(cwd)
    if repo is None:
        raise CommandError("not inside a git repository: a capture is linked to a commit (or use --task)")
    sha, ref = gitrefs.read_head(repo)
    if commit:
        try:
            sha = gitmeta.git(repo.worktree, "rev-parse", "--verify", f"{commit}^{{commit}}").strip()
        except gitmeta.GitError:
            raise CommandError(f"no commit {commit} in {repo.worktree}") from None
    if not sha:
        raise CommandError("the repository has no commit yet")
    kind = "checkpoint" if commit else "manual"
    request = Request(transcript, kind, commit=sha, branch=gitrefs.branch_name(ref), repo=repo, cwd=cwd)
    with state.transaction() as txn:
        return capture_segment(txn, request)


def upload_now(entry: queue.Entry) -> int:
    """Upload in the foreground and say where the segment went (or why it waits)."""
    from sessionledger.uploader import Mode
    from sessionledger.uploader import run as upload

    try:
        upload(Mode.INLINE)
    except Exception as exc:
        log.exception("foreground upload failed")
        print(f"Queued; the upload failed ({exc}). `sessionledger sync` will retry.")
        return 1
    if not entry.exists():
        sent = next((r for r in queue.sent(50) if r.get("id") == entry.id), {})
        session = sent.get("session") or {}
        print(f"Uploaded: {session.get('web_url') or session.get('url') or 'done'}")
        return 0
    status = entry.status()
    print(f"Queued, not uploaded yet: {status.get('reason') or status.get('state')}. See `sessionledger status`.")
    return 1

"""HEAD moved: decide under the state lock whether it is a new commit, and queue its segment.

The observation is re-read under the lock, which turns "HEAD moved" into a compare-and-swap: of
several hooks racing on the same move, exactly one captures. The observation is recorded even
when nothing is captured (checkout, reset, …) so the next call does not look again.
"""

from __future__ import annotations

import os

from sessionledger import detect, log, observe, state
from sessionledger.gitrefs import Repo
from sessionledger.segments import Request, capture

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing would slow every capture
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def on_head_moved(payload: dict, repo: Repo, sha: str, branch: str, links: list[tuple[str, str]]) -> bool:
    """True when a segment was queued; its (transcript, commit) is added to `links` (`link_tasks`)."""
    transcript = payload.get("transcript_path")
    with state.transaction() as txn:
        old = observe.seen(repo.git_dir)
        if old == sha:
            return False  # another hook took this move
        if isinstance(transcript, str) and _after_clear(txn, repo, sha, old, branch, [transcript]):
            observe.record(repo.git_dir, sha)
            return True
        outcome = (
            _capture(
                txn,
                transcript,
                repo,
                sha,
                old,
                branch=branch,
                cwd=payload.get("cwd"),
                session_id=payload.get("session_id"),
            )
            if isinstance(transcript, str)
            else SKIPPED
        )
        if outcome is not EMPTY:
            observe.record(repo.git_dir, sha)
    if outcome is QUEUED:
        links.append((str(transcript), sha))  # tasks closed before this commit covered its work
    return outcome is QUEUED


def on_commit(repo: Repo, sha: str, branch: str, sessions: list[str], links: list[tuple[str, str]]) -> bool:
    """The git post-commit hook: a checkpoint for the commit just made, of the most recently written
    transcript in `sessions` that has new lines; True when it was queued (the agent is told by
    where the transcript lives: `segments.Request`). Same
    compare-and-swap as `on_head_moved`: a tool hook that sees this HEAD afterwards finds it observed.

    One conversation per commit: the server keeps one checkpoint per commit (docs/design.md §2), so
    a second one would be refused as a duplicate and its bytes lost. The other active sessions keep
    their lines for their own next capture."""
    with state.transaction() as txn:
        old = observe.seen(repo.git_dir)
        if old == sha:
            return False
        if _after_clear(txn, repo, sha, old, branch, sessions):
            observe.record(repo.git_dir, sha)
            return True
        queued, outcomes = None, []
        for transcript in _newest_first(sessions):
            outcomes.append(_capture(txn, transcript, repo, sha, old, branch=branch, cwd=repo.worktree))
            if outcomes[-1] is QUEUED:
                queued = transcript
                break
        if any(outcome is not EMPTY for outcome in outcomes):
            observe.record(repo.git_dir, sha)
    if queued:
        links.append((queued, sha))
    return queued is not None


def link_tasks(links: list[tuple[str, str]]) -> Callable[[], None] | None:
    """The detached uploader's first step (`spawn.start_uploader(before)`): give the tasks closed
    before these commits, waiting in the queue, their commit (`tasks.attach_to_commit`).

    Not done in the hook: it reads every queued intent (hundreds while offline) and imports the
    task modules, all after the capture is durable. A waiting task is never prepared before it is
    linked or has waited `tasks.WAIT_FOR_COMMIT`, so nothing is uploaded with the wrong commit."""
    if not links:
        return None

    def run() -> None:
        from sessionledger.tasks import attach_to_commit

        for transcript, sha in links:
            attach_to_commit(transcript, sha)

    return run


def _newest_first(sessions: list[str]) -> list[str]:
    """The conversation written last most likely made the commit (or is the one its author watched)."""

    def written(transcript: str) -> float:
        try:
            return os.stat(transcript).st_mtime
        except OSError:
            return 0.0

    return sorted(sessions, key=written, reverse=True)


QUEUED, SKIPPED, EMPTY = "queued", "skipped", "empty"


def claim_unseen_commit(txn: state.Transaction, request: Request) -> bool:
    """An `end` segment linked to a commit no hook captured — typed in another terminal after the
    agent's last shell command, with no git hook installed — carries that commit's attribution and
    facts, as its checkpoint would have (docs/attribution.md "Commits no hook saw").

    True when HEAD (`request.commit`) is a new commit of this conversation that was never
    observed: the request is marked and its `previous_head` set. The caller records the
    observation once the segment is queued (`observe_claimed`), under the same lock, so a tool
    hook that runs later in a resumed session finds the commit taken, as after `on_head_moved`.
    """
    repo, sha = request.repo, request.commit
    if repo is None or not sha:
        return False
    old = observe.seen(repo.git_dir)
    if old == sha or not detect.judge(repo, sha, detect.reference_time(txn, request.transcript)).capture:
        return False
    request.previous_head, request.attribute_commit = old, True
    return True


def observe_claimed(request: Request, queued: object) -> None:
    """Record the commit `claim_unseen_commit` claimed once its segment is queued."""
    if queued is not None and request.attribute_commit and request.repo is not None and request.commit:
        observe.record(request.repo.git_dir, request.commit)


def _after_clear(txn: state.Transaction, repo: Repo, sha: str, old: str | None, branch: str, others: list[str]) -> bool:
    """A commit of the work a /clear left uncommitted goes to the conversation that wrote it."""
    if not isinstance(txn.data.get("cleared"), dict) or not txn.data["cleared"]:
        return False
    from sessionledger import clears

    return clears.claim(txn, repo, sha, old, branch, others) is not None


def _capture(txn: state.Transaction, transcript: str, repo: Repo, sha: str, old: str | None, **request: Any) -> str:
    """QUEUED; SKIPPED (not a new commit); EMPTY: a new commit but no new complete line yet.

    EMPTY leaves the move unobserved: Claude Code may not have flushed the turn when the hook
    runs, and the next Bash call will then find the lines and link them to this commit.
    ``request``: the rest of the segment's `Request` (branch, cwd, session id or agent).
    """
    verdict = detect.judge(repo, sha, detect.reference_time(txn, transcript))
    if not verdict.capture:
        log.info(f"commit {sha[:10]} in {repo.worktree}; {transcript} not captured: {verdict.reason}")
        return SKIPPED
    queued = capture(txn, Request(transcript, "checkpoint", commit=sha, previous_head=old, repo=repo, **request))
    return QUEUED if queued is not None else EMPTY

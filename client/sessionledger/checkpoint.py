"""HEAD moved: decide under the state lock whether it is a new commit, and queue its segment.

The observation is re-read under the lock, which turns "HEAD moved" into a compare-and-swap: of
several hooks racing on the same move, exactly one captures. The observation is recorded even
when nothing is captured (checkout, reset, …) so the next call does not look again.
"""

from __future__ import annotations

from sessionledger import detect, log, observe, state
from sessionledger.gitrefs import Repo
from sessionledger.segments import Request, capture


def on_head_moved(payload: dict, repo: Repo, sha: str, branch: str) -> bool:
    """True when a segment was queued."""
    transcript = payload.get("transcript_path")
    with state.transaction() as txn:
        old = observe.seen(repo.git_dir)
        if old == sha:
            return False  # another hook took this move
        outcome = _capture_commit(txn, payload, repo, sha, branch, old) if isinstance(transcript, str) else SKIPPED
        if outcome is not EMPTY:
            observe.record(repo.git_dir, sha)
    if outcome is QUEUED:
        from sessionledger.tasks import attach_to_commit

        attach_to_commit(str(transcript), sha)  # tasks closed before this commit covered its work
    return outcome is QUEUED


QUEUED, SKIPPED, EMPTY = "queued", "skipped", "empty"


def _capture_commit(txn: state.Transaction, payload: dict, repo: Repo, sha: str, branch: str, old: str | None) -> str:
    """QUEUED; SKIPPED (not a new commit); EMPTY: a new commit but no new complete line yet.

    EMPTY leaves the move unobserved: Claude Code may not have flushed the turn when the hook
    runs, and the next Bash call will then find the lines and link them to this commit.
    """
    transcript = str(payload["transcript_path"])
    verdict = detect.judge(repo, sha, detect.reference_time(txn, transcript))
    if not verdict.capture:
        log.info(f"HEAD of {repo.worktree} moved to {sha[:10]}; not captured: {verdict.reason}")
        return SKIPPED
    request = Request(
        transcript,
        "checkpoint",
        session_id=payload.get("session_id"),
        commit=sha,
        previous_head=old,
        branch=branch,
        repo=repo,
        cwd=payload.get("cwd"),
    )
    return QUEUED if capture(txn, request) is not None else EMPTY

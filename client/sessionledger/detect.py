"""Is the commit HEAD moved to a new commit of this conversation?

HEAD moving is the signal (docs/design.md §7: whatever the command looked like), but not every move is a
commit made here: a checkout, reset, pull or rebase also moves it. The reflog's last entry names
the operation and its time without running git; without a matching reflog entry (reflog off,
reftable) git is asked for the commit time and any move counts.

Time rule: a commit older than the conversation's last capture (or, before any capture, its
first line) was not made in this segment — this is what lets the very first commit seen in a
repository count without an earlier observation, and keeps a branch switch to an old commit
from being captured.
"""

from __future__ import annotations

import os

from sessionledger import gitrefs, state, transcripts

SLACK_SECONDS = 2.0  # reflog times are whole seconds; transcript times have milliseconds
_COMMIT_ACTIONS = ("commit", "cherry-pick", "revert", "am")


class Verdict:
    __slots__ = ("capture", "reason")

    def __init__(self, capture: bool, reason: str) -> None:
        self.capture, self.reason = capture, reason


def judge(repo: gitrefs.Repo, sha: str, reference: float | None) -> Verdict:
    """Whether HEAD at `sha` is a new commit made after `reference` (epoch seconds)."""
    entry = gitrefs.reflog_last(repo, sha)
    if entry is not None and not is_commit_action(entry.action, entry.message):
        return Verdict(False, f"HEAD moved by `{entry.action}`, not a commit")
    when = float(entry.time) if entry is not None else _commit_time(repo, sha)
    if reference is not None and when is not None and when + SLACK_SECONDS < reference:
        return Verdict(False, "the commit is older than this conversation segment")
    return Verdict(True, entry.action if entry is not None else "HEAD moved")


def commit_moment(repo: gitrefs.Repo, sha: str) -> float | None:
    """When HEAD moved to `sha` (the reflog), else the commit's own time."""
    entry = gitrefs.reflog_last(repo, sha)
    return float(entry.time) if entry is not None else _commit_time(repo, sha)


def is_commit_action(action: str, message: str) -> bool:
    """`commit`, `commit (amend)`, `cherry-pick`, a real merge; not checkout/reset/pull/rebase."""
    if action.startswith(_COMMIT_ACTIONS):
        return True
    return action.startswith("merge ") and not message.startswith("Fast-forward")


def _commit_time(repo: gitrefs.Repo, sha: str) -> float | None:
    from sessionledger.gitmeta import GitError, commit_time

    try:
        return commit_time(repo.worktree, sha)
    except GitError:
        return None


def reference_time(txn: state.Transaction, transcript: str) -> float | None:
    """When this conversation's current segment began: its last capture, else its first line."""
    record = txn.data["transcripts"].get(transcript) or {}
    if record.get("captured_at"):
        return float(record["captured_at"])
    return transcripts.first_timestamp(transcript) if os.path.exists(transcript) else None

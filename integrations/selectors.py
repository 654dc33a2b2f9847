"""Reading pull requests for pages (inside the caller's project scope)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q

from integrations.models import PullRequest, PullRequestCommit
from projects.models import Project
from sessions_app.models import CommitLink, Session
from sessions_app.selectors import session_queryset


@dataclass(frozen=True)
class PullRequestCommitSessions:
    sha: str
    still_in_pr: bool
    sessions: list[Session]


def pull_request_get(*, project: Project, number: int) -> PullRequest | None:
    """The project's PR of this number (the most recently updated if two bound repositories share it)."""
    pr: PullRequest | None = (
        PullRequest.objects.filter(project=project, number=number)
        .select_related("binding")
        .order_by("-updated_at")
        .first()
    )
    return pr


def pull_request_sessions(*, pr: PullRequest) -> list[PullRequestCommitSessions]:
    """Each commit the PR holds (then those it no longer holds) with its sessions, in two queries
    beside the commits': commits re-linked after a rebase count as theirs (``sessions_for_commit``)."""
    commits = list(PullRequestCommit.objects.filter(pull_request=pr))
    shas = [c.sha for c in commits]
    links = CommitLink.objects.filter(project=pr.project, new_hash__in=shas).values_list("new_hash", "old_hash")
    old_to_new = {old: new for new, old in links}
    sessions = session_queryset(project=pr.project).filter(
        Q(commit_hash__in=shas) | Q(commit_hash__in=list(old_to_new))
    )
    by_commit: dict[str, list[Session]] = {}
    for session in sessions.order_by("captured_at"):
        sha = session.commit_hash or ""
        by_commit.setdefault(old_to_new.get(sha, sha), []).append(session)
    return [PullRequestCommitSessions(c.sha, c.still_in_pr, by_commit.get(c.sha, [])) for c in commits]

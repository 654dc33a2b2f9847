"""Reading pull requests for pages and the API (inside the caller's project scope)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Case, Exists, OuterRef, Q, QuerySet, Subquery, When

from integrations.models import PullRequest, PullRequestCommit
from projects.models import Project
from sessions_app.attribution.selectors import AttributionSummary, attribution_summary
from sessions_app.models import Attribution, CommitLink, Kind, Session
from sessions_app.prices import Usage, usage_of
from sessions_app.selectors import session_queryset


@dataclass(frozen=True)
class PullRequestCommitSessions:
    sha: str
    still_in_pr: bool
    sessions: list[Session]


@dataclass(frozen=True)
class PullRequestLines:
    """The PR's added lines: its commits' attribution records summed. A commit with sessions but no
    record (captured before attribution, or refused) adds its diff stat's insertions as unknown."""

    summary: AttributionSummary
    unattributed_commits: int
    commits_without_session: int


@dataclass
class PullRequestConversation:
    """One agent session behind the PR (or one session that records none): its sessions behind the
    PR's commits, and those commits (sha, still in the PR) in PR order."""

    agent_session_id: str
    sessions: list[Session]
    commits: list[tuple[str, bool]]

    @property
    def first(self) -> Session:
        return self.sessions[0]


@dataclass(frozen=True)
class PullRequestReview:
    """What the PR page and the API show of a PR beyond its own fields."""

    commits: list[PullRequestCommitSessions]
    lines: PullRequestLines
    usage: Usage
    conversations: list[PullRequestConversation]


def pull_request_review(*, pr: PullRequest) -> PullRequestReview:
    commits = pull_request_sessions(pr=pr)
    return PullRequestReview(
        commits,
        pull_request_lines(project=pr.project, commits=commits),
        pull_request_usage(project=pr.project, commits=commits),
        pull_request_conversations(commits),
    )


def pull_request_get(*, project: Project, number: int) -> PullRequest | None:
    """The project's PR of this number (the most recently updated if two bound repositories share it)."""
    pr: PullRequest | None = (
        PullRequest.objects.filter(project=project, number=number)
        .select_related("binding")
        .order_by("-updated_at")
        .first()
    )
    return pr


def pull_requests_list(*, project: Project, head: str = "", state: str = "") -> QuerySet[PullRequest]:
    """The project's PRs, open ones first, then the most recently updated; ``head``: of that branch."""
    rows: QuerySet[PullRequest] = PullRequest.objects.filter(project=project).select_related("binding", "project")
    if head:
        rows = rows.filter(head_ref=head)
    if state:
        rows = rows.filter(state=state)
    return rows.order_by(Case(When(state=PullRequest.State.OPEN, then=0), default=1), "-updated_at")


def pull_request_sessions(*, pr: PullRequest) -> list[PullRequestCommitSessions]:
    """Each commit the PR holds (then those it no longer holds) with its sessions, in two queries
    beside the commits' (``sessions_by_commit``)."""
    commits = list(PullRequestCommit.objects.filter(pull_request=pr))
    by_commit = sessions_by_commit(project=pr.project, shas=[c.sha for c in commits])
    return [PullRequestCommitSessions(c.sha, c.still_in_pr, by_commit.get(c.sha, [])) for c in commits]


def sessions_by_commit(*, project: Project, shas: list[str]) -> dict[str, list[Session]]:
    """The sessions of each commit, oldest first, in two queries: commits re-linked after a rebase
    count as theirs (as ``sessions_for_commit`` finds them)."""
    links = CommitLink.objects.filter(project=project, new_hash__in=shas).values_list("new_hash", "old_hash")
    old_to_new = {old: new for new, old in links}
    sessions = session_queryset(project=project).filter(Q(commit_hash__in=shas) | Q(commit_hash__in=list(old_to_new)))
    by_commit: dict[str, list[Session]] = {}
    for session in sessions.order_by("captured_at"):
        sha = session.commit_hash or ""
        by_commit.setdefault(old_to_new.get(sha, sha), []).append(session)
    return by_commit


def pull_request_conversations(commits: list[PullRequestCommitSessions]) -> list[PullRequestConversation]:
    """The PR's sessions grouped by agent session, in the order their first commit entered the PR."""
    found: dict[str, PullRequestConversation] = {}
    for commit in commits:
        for session in commit.sessions:
            key = session.agent_session_id or f"session:{session.pk}"
            conversation = found.setdefault(key, PullRequestConversation(session.agent_session_id, [], []))
            conversation.sessions.append(session)
            if (commit.sha, commit.still_in_pr) not in conversation.commits:
                conversation.commits.append((commit.sha, commit.still_in_pr))
    return list(found.values())


def pull_request_lines(*, project: Project, commits: list[PullRequestCommitSessions]) -> PullRequestLines:
    """The AI share of the lines the PR adds: the records of the sessions of the commits it still
    holds (a force push's dropped commits added nothing to it), in one query."""
    held = [c for c in commits if c.still_in_pr]
    pks = [s.pk for c in held for s in c.sessions]
    rows = list(
        Attribution.objects.filter(project=project, session_id__in=pks, record__isnull=False).values_list(
            "session_id", "session__agent", "record__files"
        )
    )
    summary = attribution_summary((agent, files) for _, agent, files in rows)
    recorded = {pk for pk, _, _ in rows}
    unattributed = [c for c in held if c.sessions and not any(s.pk in recorded for s in c.sessions)]
    for commit in unattributed:
        for session in commit.sessions:
            inserted = (session.diff_stat or {}).get("insertions") if session.kind == Kind.CHECKPOINT else None
            if isinstance(inserted, int) and inserted > 0:
                summary.lines.add("unknown", inserted)
    return PullRequestLines(summary, len(unattributed), sum(1 for c in held if not c.sessions))


def pull_request_usage(*, project: Project, commits: list[PullRequestCommitSessions]) -> Usage:
    """Tokens and cost of every session behind the PR, those of commits a force push dropped too
    (the work was done): each session's digest, its token counts only."""
    pks = [s.pk for c in commits for s in c.sessions]
    return usage_of(
        Session.objects.filter(project=project, pk__in=pks).values_list("digest__effort__tokens", flat=True)
    )


def pull_requests_of_commits(*, project: Project, shas: list[str]) -> list[PullRequest]:
    """The PRs that hold or held one of these commits, or a commit one was re-linked to after a
    rebase, newest first."""
    shas = [sha for sha in shas if sha]
    if not shas:
        return []
    relinked = CommitLink.objects.filter(project=project, old_hash__in=shas).values("new_hash")
    # one join of the PRs' commits (one filter() call: both conditions on the same commit row), not
    # PRs in (commits in (relinks)): a third of the ORM's compiling on every session page view
    held = PullRequest.objects.filter(project=project).filter(
        Q(commits__sha__in=shas) | Q(commits__sha__in=relinked), commits__project=project
    )
    found: list[PullRequest] = list(held.distinct().order_by("-number"))
    return found


def _held_by_pull_request(sha_column: str, number: int) -> Exists:
    """Whether the project's PR of this number (the one the PR page shows) has held the commit in
    the outer query's ``sha_column``; every subquery level ties itself to the outer row's project."""
    latest = PullRequest.objects.filter(project=OuterRef("project"), number=number).order_by("-updated_at")
    return Exists(
        PullRequestCommit.objects.filter(
            project=OuterRef("project"), sha=OuterRef(sha_column), pull_request_id=Subquery(latest.values("pk")[:1])
        )
    )


def sessions_of_pull_request(queryset: QuerySet[Session], number: int) -> QuerySet[Session]:
    """The list filter ``pr``: the sessions of ``queryset`` behind a commit the PR holds or held,
    directly or through a relink (installed into ``sessions_app.filters`` by ``integrations.apps``)."""
    relinked = CommitLink.objects.filter(project=OuterRef("project"), old_hash=OuterRef("commit_hash"))
    return queryset.filter(
        Q(_held_by_pull_request("commit_hash", number))
        | Q(Exists(relinked.filter(_held_by_pull_request("new_hash", number))))
    )

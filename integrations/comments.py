"""The PR comment: one per pull request, written on its first sync and edited in place after, found by
a hidden marker (docs/forges.md). Everyone who reads the repository reads it, members of the project or
not: by default it says counts and links only; titles and prompt excerpts are the project's opt-in."""

from __future__ import annotations

import logging
import re
from dataclasses import asdict, dataclass
from typing import Any

from django.conf import settings

from integrations.forges import ADAPTERS
from integrations.forges.base import Repository
from integrations.forges.http import ForgeError
from integrations.models import ForgeCommentSettings, PullRequest
from integrations.selectors import pull_request_sessions
from sessions_app.links import session_web_url
from sessions_app.models import Attribution, Session

logger = logging.getLogger(__name__)

MARKER = "<!-- sessionledger:pull-request -->"
LISTED = 20  # conversations listed in the comment; the PR page has them all
EXCERPT = 120  # characters of a prompt excerpt (opt-in)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069]+")
_BACKTICKS = re.compile(r"`+")


@dataclass(frozen=True)
class Summary:
    """What the comment counts, kept on the PR to say what changed at the next push."""

    head: str
    commits: int
    dropped: int
    conversations: int
    added_lines: int
    ai_lines: int
    human_lines: int

    @property
    def ai_percent(self) -> int | None:
        return round(100 * self.ai_lines / self.added_lines) if self.added_lines else None


@dataclass(frozen=True)
class Conversation:
    url: str
    commits: int
    title: str
    prompt: str


def plain(text: str, limit: int) -> str:
    """Hostile text made inert in GitHub's and GitLab's markdown: one line in a code span (no markup,
    no HTML, no mention, no autolink inside one), fenced with more backticks than it holds, its pipes
    escaped (a table cell ends at a pipe even inside code)."""
    line = " ".join(_CONTROL.sub(" ", text).split())
    if len(line) > limit:
        line = line[: limit - 1] + "…"
    if not line:
        return ""
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(line)), default=0) + 1)
    return f"{fence} {line.replace('|', chr(92) + '|')} {fence}"


def pull_request_url(pr: PullRequest) -> str:
    return f"{settings.SITE_URL}/p/{pr.project.slug}/pr/{pr.number}"


def summarise(pr: PullRequest) -> tuple[Summary, list[Conversation]]:
    commits = pull_request_sessions(pr=pr)
    current = [c for c in commits if c.still_in_pr]
    sessions: dict[Any, Session] = {}
    commits_of: dict[str, set[str]] = {}
    conversation_of: dict[Any, str] = {}
    for commit in current:
        for session in commit.sessions:
            sessions[session.pk] = session
            key = session.agent_session_id or str(session.pk)  # one conversation per agent session
            conversation_of[session.pk] = key
            commits_of.setdefault(key, set()).add(commit.sha)
    added = ai = human = 0
    records = Attribution.objects.filter(project=pr.project, session__in=list(sessions), record__isnull=False)
    for found in records.only("added_lines", "ai_lines", "record"):
        added += found.added_lines
        ai += found.ai_lines
        vendor = ((found.record or {}).get("metadata") or {}).get("dev.sessionledger") or {}
        human += int(vendor.get("human_lines") or 0)
    latest: dict[str, Session] = {}
    for session in sorted(sessions.values(), key=lambda s: s.captured_at):
        latest[conversation_of[session.pk]] = session
    conversations = [
        Conversation(
            url=session_web_url(session),
            commits=len(commits_of[key]),
            title=session.title,
            prompt=str(((session.digest or {}).get("prompts") or [""])[0] or ""),
        )
        for key, session in latest.items()
    ]
    summary = Summary(
        head=pr.head_sha,
        commits=len(current),
        dropped=len(commits) - len(current),
        conversations=len(conversations),
        added_lines=added,
        ai_lines=ai,
        human_lines=human,
    )
    return summary, conversations


def _share(summary: Summary) -> str:
    if not summary.added_lines:
        return "no attributed lines yet"
    unknown = summary.added_lines - summary.ai_lines - summary.human_lines

    def percent(n: int) -> str:
        return f"{round(100 * n / summary.added_lines)}%"

    return (
        f"{percent(summary.ai_lines)} AI · {percent(summary.human_lines)} human · {percent(unknown)} unknown"
        f" of {summary.added_lines} added lines"
    )


def _since(previous: Summary | None, summary: Summary) -> str:
    if previous is None or previous.head == summary.head:
        return ""
    before, after = previous.ai_percent, summary.ai_percent
    share = f"{'–' if before is None else f'{before}%'} → {'–' if after is None else f'{after}%'}"
    return (
        f"\n**Since the last push** (`{previous.head[:10]}` → `{summary.head[:10]}`): "
        f"commits {previous.commits} → {summary.commits}, no longer in the PR {previous.dropped} → "
        f"{summary.dropped}, conversations {previous.conversations} → {summary.conversations}, AI share {share}.\n"
    )


def render(
    pr: PullRequest, summary: Summary, conversations: list[Conversation], *, previous: Summary | None, details: bool
) -> str:
    page = pull_request_url(pr)
    lines = [
        MARKER,
        "### Sessionledger",
        "",
        f"**AI share:** {_share(summary)}, in {summary.commits} commit{'s' * (summary.commits != 1)}"
        + (f" ({summary.dropped} no longer in the PR)" if summary.dropped else "")
        + ".",
        f"**Conversations:** {summary.conversations} — [every conversation behind this PR]({page})",
        _since(previous, summary),
    ]
    if conversations:
        lines += ["| | conversation | commits |", "|---|---|---|"]
        for n, conversation in enumerate(conversations[:LISTED], start=1):
            label = f"conversation {n}"
            if details:
                label = plain(conversation.title, 100) or label
                if conversation.prompt:
                    label += f" — “{plain(conversation.prompt, EXCERPT)}”"
            lines.append(f"| {n} | [{label}]({conversation.url}) | {conversation.commits} |")
        if len(conversations) > LISTED:
            lines.append(f"\n…and {len(conversations) - LISTED} more [on the PR page]({page}).")
    return "\n".join(lines) + "\n"


def comment_update(pr: PullRequest) -> None:
    """Write the PR's comment (inside the PR's sync, which holds the PR's lock: never two at once)."""
    summary, conversations = summarise(pr)
    state = pr.comment_state or {}
    current = state.get("current")
    previous_state = current if current and current.get("head") != summary.head else state.get("previous")
    previous = Summary(**previous_state) if previous_state else None
    details = ForgeCommentSettings.objects.filter(project=pr.project, show_titles_and_prompts=True).exists()
    body = render(pr, summary, conversations, previous=previous, details=details)
    binding = pr.binding
    adapter = ADAPTERS[binding.installation.forge]
    repository = Repository(forge_id=binding.repository_id, full_name=binding.full_name)
    comment_id = adapter.comment_write(
        binding.installation.external_id, repository, pr.number, comment_id=pr.comment_id, marker=MARKER, body=body
    )
    new_state = {"current": asdict(summary), "previous": previous_state}
    PullRequest.objects.filter(pk=pr.pk).update(comment_id=comment_id, comment_state=new_state)
    pr.comment_id, pr.comment_state = comment_id, new_state
    check_run_update(pr, body.removeprefix(MARKER).lstrip())


def check_run_update(pr: PullRequest, summary: str) -> None:
    """The same summary as a check run on the head (GitHub), edited while the head stays. An App not
    granted *Checks* is answered 403: the comment is written all the same, and the log says why."""
    binding = pr.binding
    same_head = pr.check_run_sha == pr.head_sha
    try:
        check_run_id = ADAPTERS[binding.installation.forge].check_run_write(
            binding.installation.external_id,
            Repository(forge_id=binding.repository_id, full_name=binding.full_name),
            head_sha=pr.head_sha,
            check_run_id=pr.check_run_id if same_head else "",
            summary=summary,
        )
    except ForgeError as exc:
        logger.warning("no check run for %s#%s: %s", binding.full_name, pr.number, exc)
        return
    PullRequest.objects.filter(pk=pr.pk).update(check_run_id=check_run_id, check_run_sha=pr.head_sha)
    pr.check_run_id, pr.check_run_sha = check_run_id, pr.head_sha

"""``/p/{project}/pr/{number}``: a pull request and everything behind it (docs/forges.md, docs/ui.md).

Its title, branches and state; the AI share of the lines it adds (its commits' attribution records
summed, ``integrations.selectors.pull_request_review``), per agent and model and per file, with the
files the agent wrote whole; the tokens and cost of its sessions; each conversation behind it — one
per agent session, stitched across its segments as the whole-conversation page stitches them — with
the overview of its prompts from that page's pieces (``Joined``, ``whole.overview_html``); and its
commits, those a force push removed marked so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.http import Http404
from django.urls import reverse
from django.views.generic import TemplateView
from markupsafe import Markup

from frontend.access import PAGE_READ, ProjectPageMixin
from frontend.charts import percent
from frontend.insight_charts import money
from frontend.views.conversation_page import Joined
from integrations.selectors import PullRequestConversation, pull_request_get, pull_request_review
from projects.models import Project
from sessions_app import stitch
from sessions_app.attribution.selectors import LineTally
from sessions_app.audit import access_records
from sessions_app.models import Session

OVERVIEW_PROMPTS = 40  # prompts listed per conversation; the rest are on its whole-conversation page
OVERVIEWS_SHOWN = 25  # conversations with their prompts; further ones are listed as links only


@dataclass
class Conversation:
    """A conversation behind the PR as the page shows it: the whole agent session's segments (its
    commits outside the PR too), the page that reads it, and the overview of its prompts."""

    segments: list[Session]
    url: str
    commits: list[tuple[str, bool]]  # the PR's commits it made: (sha, still in the PR)
    overview: Markup = field(default_factory=Markup)
    prompts: int = 0

    @property
    def first(self) -> Session:
        return self.segments[0]

    @property
    def more_prompts(self) -> int:
        return max(self.prompts - OVERVIEW_PROMPTS, 0)


def conversation(project: Project, found: PullRequestConversation) -> Conversation:
    """Its agent session stitched as the whole-conversation page stitches it; a session recording no
    agent session (or whose chain is gone) is its own conversation."""
    session = found.first
    if found.agent_session_id:
        chain = stitch.agent_session_chain(project=project, agent_session_id=found.agent_session_id)
        if chain.segments:
            url = reverse("whole-conversation", kwargs={"project": project.slug, "session_id": session.pk})
            return Conversation(chain.segments, url, found.commits)
    url = reverse("session", kwargs={"project": project.slug, "session_id": session.pk})
    return Conversation(found.sessions[:1], url, found.commits)


def shares(lines: LineTally) -> list[tuple[str, int, str]]:
    """(who, lines, share of the added lines) for the agent, humans and unknown."""
    total = lines.added
    rows = [("Agent", lines.ai), ("Human", lines.human), ("Unknown", lines.unknown)]
    return [(who, n, percent(n / total) if total else "–") for who, n in rows]


class PullRequestView(ProjectPageMixin, TemplateView):
    required_roles = PAGE_READ
    template_name = "frontend/pull_request.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        pr = pull_request_get(project=self.project, number=self.kwargs["number"])
        if pr is None:
            raise Http404("No such pull request.")
        review = pull_request_review(pr=pr)
        commits, lines, usage = review.commits, review.lines, review.usage
        found = [conversation(self.project, c) for c in review.conversations]
        for shown in found[:OVERVIEWS_SHOWN]:
            shown.overview, shown.prompts = Joined(shown.segments).overview((0, OVERVIEW_PROMPTS), page=shown.url)
            # the prompts are their segments' content
            access_records(sessions=shown.segments, request=self.request, via="web")
        summary = lines.summary
        return super().get_context_data(
            pr=pr,
            commits=[c for c in commits if c.still_in_pr],
            dropped=[c for c in commits if not c.still_in_pr],
            session_count=sum(len(c.sessions) for c in commits),
            lines=lines,
            shares=shares(summary.lines),
            ai_share=percent(summary.lines.ai / summary.lines.added) if summary.lines.added else "",
            models=summary.model_rows(),
            files=sorted(summary.files.items()),
            agent_only=summary.agent_only_files(),
            usage=usage,
            cost=money(usage.cost_usd, usage.unpriced_tokens),
            conversations=found,
            **kwargs,
        )

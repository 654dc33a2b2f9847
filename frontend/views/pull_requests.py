"""``/p/{project}/pr/{number}``: a pull request and the sessions behind its commits (docs/forges.md)."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.views.generic import TemplateView

from frontend.access import PAGE_READ, ProjectPageMixin
from integrations.selectors import pull_request_get, pull_request_sessions


class PullRequestView(ProjectPageMixin, TemplateView):
    required_roles = PAGE_READ
    template_name = "frontend/pull_request.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        pr = pull_request_get(project=self.project, number=self.kwargs["number"])
        if pr is None:
            raise Http404("No such pull request.")
        commits = pull_request_sessions(pr=pr)
        return super().get_context_data(
            pr=pr,
            commits=[c for c in commits if c.still_in_pr],
            dropped=[c for c in commits if not c.still_in_pr],
            session_count=sum(len(c.sessions) for c in commits),
            **kwargs,
        )

"""Permalinks for pull-request comments (commit, task, message) and the branch timeline."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views import View
from django.views.generic import TemplateView

from frontend.access import PAGE_READ, ProjectPageMixin
from integrations.selectors import pull_requests_of_commits
from projects.errors import DomainError
from sessions_app import selectors
from sessions_app.models import Session

CHOICES_SHOWN = 50


class PermalinkView(ProjectPageMixin, View):
    """One session → redirect to it; several → a short list to choose from; none → 404."""

    required_roles = PAGE_READ
    what = ""
    suffix = ""  # what a session's URL carries to land on the ref (a message's ?at= and #fragment)

    @property
    def ref(self) -> str:
        raise NotImplementedError

    def sessions(self) -> list[Session]:
        raise NotImplementedError

    def extra_context_for(self, sessions: list[Session]) -> dict[str, Any]:
        return {}

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            sessions = self.sessions()
        except DomainError as exc:
            raise Http404(exc.message) from None
        if len(sessions) == 1:
            url = reverse("session", kwargs={"project": self.project.slug, "session_id": sessions[0].pk})
            return HttpResponseRedirect(url + self.suffix)
        context = {
            "project": self.project,
            "membership": self.membership,
            "switchable": self.switchable,
            "nav": self.nav,
            "sessions": sessions,
            "what": self.what,
            "ref": self.ref,
            "suffix": self.suffix,
            **self.extra_context_for(sessions),
        }
        return render(request, "frontend/session_choices.html", context, status=200 if sessions else 404)


class CommitLinkView(PermalinkView):
    """``/p/{project}/c/{sha}`` — any prefix of 7 or more hex characters."""

    what = "commit"

    @property
    def ref(self) -> str:
        return self.kwargs["sha"]

    def sessions(self) -> list[Session]:
        return list(selectors.sessions_for_commit(project=self.project, sha=self.ref)[:CHOICES_SHOWN])

    def extra_context_for(self, sessions: list[Session]) -> dict[str, Any]:
        shas = [s.commit_hash for s in sessions if s.commit_hash]
        return {"pull_requests": pull_requests_of_commits(project=self.project, shas=shas)}


class TaskLinkView(PermalinkView):
    """``/p/{project}/t/{task}``."""

    what = "task"

    @property
    def ref(self) -> str:
        return self.kwargs["task_id"]

    def sessions(self) -> list[Session]:
        return list(selectors.sessions_for_task(project=self.project, task_id=self.ref)[:CHOICES_SHOWN])


class MessageLinkView(PermalinkView):
    """``/p/{project}/m/{uuid}``: the session page holding that message, scrolled to it.

    Redirects to ``/p/{project}/s/{id}?at={uuid}#m-{uuid}``: the session page serves the lazy page
    the message is on. When several sessions hold it (a resumed or forked conversation re-uploads
    earlier lines), the first uploaded owns it (upload order, the server's clock: a teammate's
    backdated copy cannot take the link over), and its page offers the others (``?all``: the
    choice, in upload order).
    """

    what = "message"

    @property
    def ref(self) -> str:
        return str(self.kwargs["message_uuid"])

    @property
    def suffix(self) -> str:  # type: ignore[override]
        return f"?at={self.ref}#m-{self.ref}"

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if "all" in request.GET:
            return super().get(request, *args, **kwargs)
        holders = self.sessions()[:2]
        if not holders:
            raise Http404("No message with this id in this project.")
        url = reverse("session", kwargs={"project": self.project.slug, "session_id": holders[0].pk})
        also = "&also=1" if len(holders) > 1 else ""  # the page then offers the other sessions
        return HttpResponseRedirect(f"{url}?at={self.ref}{also}#m-{self.ref}")

    def sessions(self) -> list[Session]:
        rows = selectors.sessions_for_message(project=self.project, message_uuid=self.kwargs["message_uuid"])
        return list(rows.select_related("author")[:CHOICES_SHOWN])


class BranchTimelineView(ProjectPageMixin, TemplateView):
    """``/p/{project}/b/{branch}``: a branch's checkpoints in order, with turns and diff stats."""

    required_roles = PAGE_READ
    template_name = "frontend/branch.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        sessions = list(selectors.sessions_on_branch(project=self.project, branch=self.kwargs["branch"]))
        if not sessions:
            raise Http404("No sessions on this branch.")
        totals = {
            key: sum(int((s.diff_stat or {}).get(key) or 0) for s in sessions) for key in ("insertions", "deletions")
        }
        return super().get_context_data(
            sessions=sessions, totals=totals, turns=sum(s.turn_count for s in sessions), **kwargs
        )

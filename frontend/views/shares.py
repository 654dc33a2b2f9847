"""Share links in the project: ``/p/{project}/s/{id}/share`` creates one for a session (members),
``/p/{project}/settings/shares`` lists every link with its state, revokes, and lets an admin
switch sharing off for the whole project."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.generic import TemplateView

from frontend.access import ProjectPageMixin
from frontend.views.sessions import SessionObjectMixin
from projects.access import acting_user
from projects.errors import DomainError
from projects.models import Role
from sessions_app import shares

SHARE_ROLES: dict[str, str] = {"GET": Role.VIEWER, "HEAD": Role.VIEWER, "POST": Role.MEMBER}


def _rows(links: Any) -> list[dict[str, Any]]:
    return [{"link": link, "active": shares.is_active(link)} for link in links]


class SessionShareView(SessionObjectMixin, TemplateView):
    required_roles = SHARE_ROLES
    template_name = "frontend/share/manage_session.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        session = self.get_session()
        links = _rows(shares.share_list(project=self.project, session=session))
        return super().get_context_data(session=session, links=links, max_days=shares.MAX_DAYS, **kwargs)

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        session = self.get_session()
        days = request.POST.get("days", "")
        try:
            made = shares.share_create(
                session=session, user=acting_user(request), days=int(days) if days.isdigit() else 0
            )
        except DomainError as exc:
            messages.error(request, exc.message)
            return redirect(request.path)
        context = self.get_context_data(new_url=made.url)
        return self.render_to_response(context, status=201)


class ProjectSharesView(ProjectPageMixin, TemplateView):
    required_roles = SHARE_ROLES
    nav = "settings"
    template_name = "frontend/share/manage_project.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        links = _rows(shares.share_list(project=self.project)[:500])
        return super().get_context_data(links=links, **kwargs)

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        action = request.POST.get("action")
        if action == "revoke":
            link = shares.share_get(project=self.project, link_id=request.POST.get("link", ""))
            if link is None:
                raise Http404("No such link.")
            shares.share_revoke(link=link)
            messages.success(request, "The link is revoked.")
        elif action == "sharing" and self.membership.role == Role.ADMIN:
            shares.sharing_set(project=self.project, enabled=request.POST.get("enabled") == "1")
            messages.success(request, f"Sharing is {'on' if self.project.sharing_enabled else 'off'}.")
        else:
            return HttpResponse("Unknown action.", status=400)
        return redirect(reverse("project-shares", args=[self.project.slug]))

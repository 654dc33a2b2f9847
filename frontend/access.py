"""The page-side twin of ``projects.access.ProjectAPIView``."""

from __future__ import annotations

from typing import Any, ClassVar

from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponseBase
from django.template.response import SimpleTemplateResponse

from projects.models import Membership, Project, Role, role_at_least
from projects.scoping import project_scope, unscoped

PAGE_READ: dict[str, str] = {"GET": Role.VIEWER, "HEAD": Role.VIEWER}
PAGE_ADMIN: dict[str, str] = {"GET": Role.ADMIN, "HEAD": Role.ADMIN, "POST": Role.ADMIN}


class ProjectPageMixin(LoginRequiredMixin):
    """Resolves ``/p/{project}/…``: 404 for non-members, 403 below the required role."""

    required_roles: ClassVar[dict[str, str]] = {"GET": Role.VIEWER, "HEAD": Role.VIEWER, "POST": Role.MEMBER}
    nav: ClassVar[str] = "sessions"  # which project tab the page belongs to
    project: Project
    request: HttpRequest  # set by View.setup (the mixin is used with Django's View)
    kwargs: dict[str, Any]

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not request.user.is_authenticated:
            return self.handle_no_permission()
        # One query, before entering the scope (inside it, row-level security shows only this project's
        # memberships): every membership of the user with its project — the project switcher's list and,
        # among them, the one of this page. A project the user is not a member of is a 404 like a missing one.
        with unscoped():
            memberships = list(
                Membership.objects.filter(user=request.user).select_related("project").order_by("project__slug")
            )
        membership = next((m for m in memberships if m.project.slug == kwargs["project"]), None)
        if membership is None:
            raise Http404("No such project.")
        membership.user = request.user
        self.project, self.membership = membership.project, membership
        required = self.required_roles.get(request.method or "GET")
        if required is None or not role_at_least(self.membership.role, required):
            raise PermissionDenied(f"This page needs the {required or 'admin'} role.")
        self.switchable = [m.project for m in memberships]
        with project_scope(self.project):
            response = super().dispatch(request, *args, **kwargs)
            if isinstance(response, SimpleTemplateResponse):
                response.render()  # inside the scope, so a template's lazy query stays behind both walls
            return response

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)  # type: ignore[misc]
        context.update(
            project=self.project,
            membership=self.membership,
            nav=self.nav,
            switchable=self.switchable,
            is_admin=self.membership.role == Role.ADMIN,
        )
        return context

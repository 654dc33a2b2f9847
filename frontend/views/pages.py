"""Pages outside a project: the dashboard, invitation acceptance, the 404 page."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count, Max
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from projects import selectors, services
from projects.access import acting_user
from projects.errors import DomainError, json_error_response
from projects.models import Invitation
from projects.scoping import project_scope, unscoped
from sessions_app.selectors import session_recent_for_user


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if request.path.startswith("/api/"):
        return json_error_response(404, "not_found", "Not found.")
    return render(request, "frontend/404.html", status=404)


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    projects = selectors.project_list(user=acting_user(request)).annotate(
        session_count=Count("sessions"), last_activity=Max("sessions__captured_at")
    )
    recent = session_recent_for_user(user=request.user, limit=15)
    return render(request, "frontend/dashboard.html", {"projects": projects, "recent": recent})


@login_required
def invitation_accept(request: HttpRequest, token: str) -> HttpResponse:
    with unscoped():
        invitation = get_object_or_404(Invitation.objects.select_related("project"), token=token)
    if request.method == "POST":
        try:
            with project_scope(invitation.project):
                services.invitation_accept(invitation=invitation, user=acting_user(request))
        except DomainError as exc:
            if exc.code != "inviter_gone":  # the page itself says so
                messages.error(request, exc.message)
        else:
            messages.success(request, f"You joined {invitation.project.name} as {invitation.role}.")
            return redirect("project-home", project=invitation.project.slug)
    with project_scope(invitation.project):
        admits = services.invitation_inviter_can_admit(invitation=invitation)
    gone = "" if admits else services.INVITER_GONE.format(project=invitation.project.name)
    return render(request, "frontend/invitation.html", {"invitation": invitation, "inviter_gone": gone})

"""``/p/{project}/settings/`` (admins): members, invitations, API tokens, retention, export.

One page, one form per action (``action`` names the handler). Every write goes through
``projects.services``; a refused write (``DomainError``, e.g. removing the last admin) comes
back as a message on the page.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.mail import send_mail
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.generic import TemplateView, View

from frontend.access import PAGE_ADMIN, ProjectPageMixin
from frontend.forms import InvitationForm, RetentionForm, TokenForm
from projects import selectors, services
from projects.access import acting_user
from projects.errors import DomainError
from projects.models import ApiToken, Invitation, Membership, Project, Role
from sessions_app import export
from sessions_app import selectors as session_selectors

logger = logging.getLogger(__name__)


def invitation_link(invitation: Invitation) -> str:
    return f"{settings.SITE_URL}{reverse('invitation-accept', args=[invitation.token])}"


def project_tokens(project: Project) -> list[ApiToken]:
    """Tokens restricted to this project, whoever owns them (an admin may revoke a leaked one)."""
    return list(ApiToken.objects.filter(project=project).select_related("user").order_by("-created_at"))


def _posted_id(request: HttpRequest, name: str) -> int:
    value = request.POST.get(name, "")
    return int(value) if value.isdigit() else 0


class ProjectSettingsView(ProjectPageMixin, TemplateView):
    required_roles = PAGE_ADMIN
    nav = "settings"
    template_name = "frontend/settings.html"
    ACTIONS = frozenset(
        {"change_role", "remove_member", "invite", "revoke_invitation", "create_token", "revoke_token", "retention"}
    )

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        invitations = [i for i in selectors.invitation_list(project=self.project) if i.is_open]
        kwargs.setdefault("invitation_form", InvitationForm())
        kwargs.setdefault("token_form", TokenForm())
        kwargs.setdefault("retention_form", RetentionForm(initial={"retention_days": self.project.retention_days}))
        return super().get_context_data(
            memberships=selectors.membership_list(project=self.project),
            roles=Role.choices,
            invitations=[(i, invitation_link(i)) for i in invitations],
            tokens=project_tokens(self.project),
            server_redaction=session_selectors.server_redaction_totals(project=self.project),
            **kwargs,
        )

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        action = request.POST.get("action", "")
        if action not in self.ACTIONS:
            messages.error(request, "Unknown action.")
            return self._back()
        try:
            return getattr(self, f"do_{action}")(request)
        except DomainError as exc:
            messages.error(request, exc.message)
            return self._back()

    def _back(self, anchor: str = "") -> HttpResponse:
        url = reverse("project-settings", kwargs={"project": self.project.slug})
        return redirect(f"{url}#{anchor}" if anchor else url)

    def _membership(self, request: HttpRequest) -> Membership:
        return get_object_or_404(
            Membership.objects.select_related("user", "project"),
            project=self.project,
            pk=_posted_id(request, "membership"),
        )

    def do_change_role(self, request: HttpRequest) -> HttpResponse:
        membership = self._membership(request)
        role = request.POST.get("role", "")
        if role not in Role.values:
            raise DomainError("invalid", "Choose admin, member or viewer.")
        services.membership_change_role(membership=membership, role=role)
        messages.success(request, f"{membership.user.email} is now {role}.")
        return self._back("members")

    def do_remove_member(self, request: HttpRequest) -> HttpResponse:
        membership = self._membership(request)
        services.membership_remove(membership=membership)
        messages.success(request, f"{membership.user.email} was removed from {self.project.name}.")
        return self._back("members")

    def do_invite(self, request: HttpRequest) -> HttpResponse:
        form = InvitationForm(request.POST)
        if not form.is_valid():
            return self.render_to_response(self.get_context_data(invitation_form=form), status=400)
        invitation = services.invitation_create(
            project=self.project,
            email=form.cleaned_data["email"],
            role=form.cleaned_data["role"],
            invited_by=acting_user(request),
        )
        sent = self._send_invitation(invitation)
        note = "An e-mail is on its way; you" if sent else "The e-mail could not be sent; you"
        messages.success(request, f"Invited {invitation.email} as {invitation.role}. {note} can also copy the link.")
        return self._back("invitations")

    def _send_invitation(self, invitation: Invitation) -> bool:
        body = (
            f"{acting_user(self.request).email} invited you to {self.project.name} on Sessionledger "
            f"as {invitation.role}.\n\nAccept: {invitation_link(invitation)}\n"
        )
        try:
            send_mail(f"Join {self.project.name} on Sessionledger", body, None, [invitation.email])
        except Exception:
            logger.warning("could not e-mail invitation %s", invitation.pk, exc_info=True)
            return False
        return True

    def do_revoke_invitation(self, request: HttpRequest) -> HttpResponse:
        invitation = get_object_or_404(Invitation, project=self.project, pk=_posted_id(request, "invitation"))
        services.invitation_revoke(invitation=invitation)
        messages.success(request, f"The invitation for {invitation.email} was revoked.")
        return self._back("invitations")

    def do_create_token(self, request: HttpRequest) -> HttpResponse:
        form = TokenForm(request.POST)
        if not form.is_valid():
            return self.render_to_response(self.get_context_data(token_form=form), status=400)
        token, secret = services.token_create(
            user=acting_user(request),
            name=form.cleaned_data["name"],
            project=self.project,
            scopes=form.cleaned_data["scopes"],
            expires_days=form.cleaned_data["expires_days"],
        )
        response = self.render_to_response(self.get_context_data(new_token=token, new_secret=secret))
        response["Cache-Control"] = "no-store"  # the secret is shown once and must not linger in caches
        return response

    def do_revoke_token(self, request: HttpRequest) -> HttpResponse:
        token = get_object_or_404(ApiToken, project=self.project, pk=_posted_id(request, "token"))
        services.token_revoke(token=token)
        messages.success(request, f"Token “{token.name}” was revoked.")
        return self._back("tokens")

    def do_retention(self, request: HttpRequest) -> HttpResponse:
        form = RetentionForm(request.POST)
        if not form.is_valid():
            return self.render_to_response(self.get_context_data(retention_form=form), status=400)
        services.project_update(project=self.project, retention_days=form.cleaned_data["retention_days"])
        days = form.cleaned_data["retention_days"]
        messages.success(request, f"Sessions are kept for {days} days." if days else "Sessions are kept forever.")
        return self._back("retention")


class ProjectExportView(ProjectPageMixin, View):
    """``/p/{project}/settings/export`` (admins, like the settings page): the whole project as a zip
    (docs/security.md "Export"), streamed."""

    required_roles = PAGE_ADMIN

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> StreamingHttpResponse:
        return export.download(self.project)

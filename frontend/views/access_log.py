"""The audit trail for admins: who read sessions, when, how and from where; and deleting a session.

A row counts the reads of one reader, session, way of reading and hour (``AccessLog``), so a
reader paging through a long session is one line, not fifty. Both pages filter by reader and
by date. ``/p/{project}/access-log`` lists a project's reads, newest first, in keyset pages on
(at, id) — the ``accesslog_project_recent`` index — with one query for the rows and one for the
titles of the sessions they name. ``/p/{project}/s/{id}/access`` is one session's reads; it
outlives the session, since a log row keeps only the session's id.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from django.contrib import messages
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.generic import TemplateView

from frontend.access import ProjectPageMixin
from frontend.forms import AccessLogForm
from frontend.pagination import AccessLogPagination, KeysetPage, keyset_page
from frontend.views.sessions import SessionObjectMixin
from projects import selectors as project_selectors
from projects.access import acting_user
from projects.errors import DomainError
from projects.models import Role
from sessions_app.audit import access_record
from sessions_app.models import AccessLog, Session
from sessions_app.services import session_delete

ADMIN_READ: dict[str, str] = {"GET": Role.ADMIN, "HEAD": Role.ADMIN}
ADMIN_WRITE: dict[str, str] = {**ADMIN_READ, "POST": Role.ADMIN}


class AccessLogMixin(ProjectPageMixin):
    required_roles = ADMIN_READ
    nav = "access"
    template_name: str | None = "frontend/access_log.html"

    def page(self, entries: QuerySet[AccessLog]) -> KeysetPage:
        return keyset_page(AccessLogPagination(), self.filtered(entries).select_related("user"), self.request)

    @cached_property
    def form(self) -> AccessLogForm:
        readers = [m.user.email for m in project_selectors.membership_list(project=self.project)]
        form = AccessLogForm(self.request.GET, readers=readers)
        form.is_valid()
        return form

    def filtered(self, entries: QuerySet[AccessLog]) -> QuerySet[AccessLog]:
        form = self.form
        if form.value("who"):
            entries = entries.filter(user__email=form.value("who"))
        if form.value("since"):
            entries = entries.filter(at__gte=form.value("since"))
        if form.value("until"):
            entries = entries.filter(hour__lte=form.value("until"))
        return entries

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return super().get_context_data(form=self.form, filters=self.form.params(), **kwargs)


class ProjectAccessLogView(AccessLogMixin, TemplateView):
    """``/p/{project}/access-log``: every read of the project's sessions."""

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        page = self.page(AccessLog.objects.filter(project=self.project))
        ids = {entry.session_id for entry in page.items}
        sessions = Session.objects.filter(project=self.project, pk__in=ids).only(
            "id", "title", "kind", "commit_hash", "task_id"
        )
        found = {s.pk: s for s in sessions}
        for entry in page.items:
            entry.target = found.get(entry.session_id)  # None once deleted
        return super().get_context_data(page=page, **kwargs)


class SessionAccessLogView(AccessLogMixin, TemplateView):
    """``/p/{project}/s/{id}/access``: one session's reads, also after the session was deleted."""

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        session_id = self.kwargs["session_id"]
        session = Session.objects.filter(project=self.project, pk=session_id).first()
        page = self.page(AccessLog.objects.filter(project=self.project, session_id=session_id))
        if session is None and not page.items and not self.request.GET.get("cursor"):
            raise Http404("No such session.")
        return super().get_context_data(page=page, session=session, **kwargs)  # kwargs hold session_id


class SessionDeleteView(SessionObjectMixin, TemplateView):
    """``/p/{project}/s/{id}/delete``: a confirmation page, then the POST removes blobs and row.

    The deletion is logged (``sessions_app.audit``) and written to the access log as ``delete``,
    so the project's log says who removed a session that others had read.
    """

    required_roles = ADMIN_WRITE
    template_name = "frontend/session_delete.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return super().get_context_data(session=self.get_session(), **kwargs)

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        session = self.get_session()
        try:
            session_delete(session=session, by=f"{acting_user(request).email} (web)")
        except DomainError as exc:  # a project under legal hold
            messages.error(request, exc.message)
            return redirect("session", project=self.project.slug, session_id=session.pk)
        access_record(session=session, request=request, via="delete")
        title = session.title or session.ref or str(session.pk)
        messages.success(request, f"Deleted the session “{title}” with its transcript.")
        return redirect("project-home", project=self.project.slug)

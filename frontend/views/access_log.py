"""The audit trail for admins: who read sessions, when, how and from where; and deleting a session.

A row counts the reads of one reader, session, way of reading and hour (``AccessLog``), so a
reader paging through a long session is one line, not fifty. Both pages filter by reader and
by date. ``/p/{project}/access-log`` lists a project's reads, newest first, in keyset pages on
(at, id) — the ``accesslog_project_recent`` index — with one query for the rows and one for the
titles of the sessions they name. ``/p/{project}/s/{id}/access`` is one session's reads; it
outlives the session, since a log row keeps only the session's id.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from django.contrib import messages
from django.db.models import Q, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.generic import TemplateView

from frontend.access import ProjectPageMixin
from frontend.forms import AccessLogForm
from frontend.views.sessions import SessionObjectMixin
from projects import selectors as project_selectors
from projects.access import acting_user
from projects.models import Role
from sessions_app.audit import access_record
from sessions_app.models import AccessLog, Session
from sessions_app.services import session_delete

ADMIN_READ: dict[str, str] = {"GET": Role.ADMIN, "HEAD": Role.ADMIN}
ADMIN_WRITE: dict[str, str] = {**ADMIN_READ, "POST": Role.ADMIN}
PAGE_SIZE = 50
OLDER, NEWER = "o", "n"


@dataclass
class LogPage:
    items: list[AccessLog]
    older: str | None
    newer: str | None


def encode_cursor(direction: str, entry: AccessLog) -> str:
    return base64.urlsafe_b64encode(f"{direction}|{entry.at.isoformat()}|{entry.pk}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, datetime, int] | None:
    """(direction, at, id), or None for a missing or tampered cursor (→ the newest page)."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        direction, stamp, pk = text.split("|")
        position = (direction, datetime.fromisoformat(stamp), int(pk))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return None
    return position if direction in (OLDER, NEWER) and position[1].tzinfo else None


def log_page(entries: QuerySet[AccessLog], cursor: str, limit: int = PAGE_SIZE) -> LogPage:
    position = decode_cursor(cursor) if cursor else None
    if position is None or position[0] == OLDER:
        after = Q(at__lt=position[1]) | Q(at=position[1], id__lt=position[2]) if position else Q()
        rows = list(entries.filter(after).order_by("-at", "-id")[: limit + 1])
        older = encode_cursor(OLDER, rows[limit - 1]) if len(rows) > limit else None
        return LogPage(rows[:limit], older, encode_cursor(NEWER, rows[0]) if position and rows else None)
    before = Q(at__gt=position[1]) | Q(at=position[1], id__gt=position[2])
    rows = list(entries.filter(before).order_by("at", "id")[: limit + 1])
    newer = encode_cursor(NEWER, rows[limit - 1]) if len(rows) > limit else None
    rows = rows[:limit][::-1]
    return LogPage(rows, encode_cursor(OLDER, rows[-1]) if rows else None, newer)


class AccessLogMixin(ProjectPageMixin):
    required_roles = ADMIN_READ
    nav = "access"
    template_name: str | None = "frontend/access_log.html"

    def page(self, entries: QuerySet[AccessLog]) -> LogPage:
        return log_page(self.filtered(entries).select_related("user"), self.request.GET.get("cursor", ""))

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
            entry.target = found.get(entry.session_id)  # type: ignore[attr-defined]  # None once deleted
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
        access_record(session=session, request=request, via="delete")
        session_delete(session=session, by=f"{acting_user(request).email} (web)")
        title = session.title or session.ref or str(session.pk)
        messages.success(request, f"Deleted the session “{title}” with its transcript.")
        return redirect("project-home", project=self.project.slug)

"""``/share/{token}``: one session, read-only, for whoever holds a live share link.

Nothing else is reachable from it: its own template without the site's navigation, no link into
the project (message links stay under ``/share/{token}``), ``noindex``, no referrer, no cache.
Every view is in the access log with via ``share``. A token that is unknown, expired, revoked,
or whose project turned sharing off gets the site's ordinary 404 (docs/attribution.md).
"""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views import View

from frontend.forms import MessageFilterForm
from frontend.present import full_message_html
from frontend.reading import gc_paused, read
from frontend.render import Where
from frontend.views.sessions import _document
from projects.scoping import project_scope
from sessions_app import selectors, shares
from sessions_app.audit import access_record
from sessions_app.models import Session, ShareLink


def _no_trace(response: HttpResponse) -> HttpResponse:
    response["X-Robots-Tag"] = "noindex, nofollow"
    response["Referrer-Policy"] = "no-referrer"
    response["Cache-Control"] = "private, no-store"
    return response


class SharedSessionView(View):
    def get(self, request: HttpRequest, token: str, index: int | None = None) -> HttpResponse:
        link = shares.share_resolve(token)
        if link is None:
            raise Http404("No such page.")
        with project_scope(link.project):
            session = selectors.session_get(project=link.project, session_id=link.session_id)
            if session is None:
                raise Http404("No such page.")
            response = self._page(request, link, session, token, index)
        return _no_trace(response)

    def _page(self, request: HttpRequest, link: ShareLink, session: Session, token: str, index: int | None) -> Any:
        document, unavailable = _document(session)
        context: dict[str, Any] = {"session": session, "link": link, "unavailable": unavailable, "token": token}
        if index is not None:
            messages = (document or {}).get("messages") or []
            if not 0 <= index < len(messages):
                raise Http404("No such page.")
            context.update(message=messages[index], html=full_message_html(messages[index]))
            template = "frontend/share/message.html"
        else:
            page = MessageFilterForm({"page": request.GET.get("page", "1")})
            page.is_valid()
            author = (session.author.email if session.author else "").split("@")[0]
            with gc_paused():
                reading = read(document, page, where=Where(f"/share/{token}", author), params={}) if document else None
            context.update(reading=reading, params={})
            template = "frontend/share/session.html"
        access_record(session=session, request=request, via="share")
        return render(request, template, context, status=503 if unavailable else 200)

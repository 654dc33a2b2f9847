"""``/share/{token}``: one session, read-only, for whoever holds a live share link.

Nothing else is reachable from it: its own template without the site's navigation, no link into
the project (message links stay under ``/share/{token}``), ``noindex``, no referrer, no cache.
Every view is in the access log with via ``share``. Its pages come from the session page's cache, and
each link answers at most ``SESSIONLEDGER_SHARE_VIEW_RATE`` views (429 beyond): an anonymous reader
cannot make the server render a long session over and over. A token that is unknown, expired, revoked,
or whose project turned sharing off gets the site's ordinary 404 (docs/attribution.md).
"""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views import View

from frontend.forms import MessageFilterForm
from frontend.session_page import page_cache
from frontend.session_page.load import document_load
from frontend.session_page.present import full_message_html
from frontend.session_page.render import Where
from frontend.views.sessions import session_page
from projects import limits
from projects.errors import DomainError
from projects.scoping import project_scope
from sessions_app import selectors, shares
from sessions_app.audit import access_record
from sessions_app.models import Session, ShareLink, Status


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
        try:
            limits.spend(scope="share-view", rate_setting="SESSIONLEDGER_SHARE_VIEW_RATE", idents=[f"link:{link.pk}"])
        except DomainError as exc:
            return _no_trace(_too_many(exc))
        with project_scope(link.project):
            session = selectors.session_get(project=link.project, session_id=link.session_id)
            if session is None:
                raise Http404("No such page.")
            response = self._page(request, link, session, token, index)
        return _no_trace(response)

    def _page(self, request: HttpRequest, link: ShareLink, session: Session, token: str, index: int | None) -> Any:
        context: dict[str, Any] = {"session": session, "link": link, "token": token}
        if index is not None:
            document, unavailable = document_load(session)
            messages = (document or {}).get("messages") or []
            if not 0 <= index < len(messages):
                raise Http404("No such page.")
            context.update(message=messages[index], html=full_message_html(messages[index]))
            template = "frontend/share/message.html"
        else:
            reading, unavailable = _reading(request, session, token)
            shares.share_opened(link)
            context.update(reading=reading, params={})
            template = "frontend/share/session.html"
        context["unavailable"] = unavailable
        access_record(session=session, request=request, via="share")
        return render(request, template, context, status=503 if unavailable else 200)


def _reading(request: HttpRequest, session: Session, token: str) -> tuple[Any, bool]:
    """The page as a member's is made: from the page cache (frontend/session_page/page_cache.py) when it holds it, so a
    link passed around costs one rendering per page, not one per reader."""
    page = MessageFilterForm({"page": request.GET.get("page", "1")})
    page.is_valid()
    author = (session.author.email if session.author else "").split("@")[0]
    where = Where(f"/share/{token}", author)
    reading = page_cache.reading_of(session_page(session, where, {}), page)
    return reading, reading is None and session.status not in (Status.PROCESSING, Status.FAILED)


def _too_many(exc: DomainError) -> HttpResponse:
    response = HttpResponse(exc.message, status=429, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(exc.retry_after or 60)
    return response

"""``/p/{project}/s/{id}/conversation``: every segment of the agent session a session belongs to, on one
page. Named by one of its sessions, so the link never carries a teammate's agent session id in its path.

The session page's reading (filters, Find, lazy pages, cards, steps, turns) over the segments'
documents joined by ``frontend.session_page.whole``, with each commit boundary marked and an overview per
prompt above the conversation (``docs/ui.md``).
"""

from __future__ import annotations

from typing import Any, cast

from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, reverse
from django.utils.decorators import method_decorator
from django.views.decorators.gzip import gzip_page
from django.views.generic import TemplateView
from markupsafe import Markup

from frontend import http_cache, stylesheets
from frontend.access import PAGE_READ, ProjectPageMixin
from frontend.forms import ROLE_CHOICES, MessageFilterForm
from frontend.http_cache import Body
from frontend.session_page import page_cache, whole
from frontend.session_page.load import document_load, filter_params
from frontend.session_page.page_cache import page_where
from frontend.views.sessions import later_pages
from projects.scoping import project_scope
from sessions_app import stitch
from sessions_app.audit import access_records
from sessions_app.models import Kind, Session


@method_decorator(stylesheets.allowed(), name="dispatch")
@method_decorator(gzip_page, name="dispatch")  # as the session page, for the same reasons (docs/ui.md)
class WholeConversationView(ProjectPageMixin, TemplateView):
    required_roles = PAGE_READ
    template_name = "frontend/whole_conversation.html"

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        self.chain = stitch.agent_session_chain_of(project=self.project, session_id=self.kwargs["session_id"])
        if not self.chain.segments:
            raise Http404("No such session, or it records no agent session.")
        self.agent_session_id = self.chain.segments[0].agent_session_id
        if (unchanged := http_cache.not_modified(request, self._validators)) is not None:
            self._record_reads()  # the browser's copy is read
            return unchanged
        if "through" in request.GET:
            return later_pages(
                request,
                lambda params: whole_page(self.chain.segments, params)[0],
                self._record_reads,
                self._validators,
                http_cache.content_key("whole-later", request, self.chain.segments),
            )
        context = self.get_context_data(**kwargs)
        response = self.render_to_response(context)
        if context["readable"]:
            # once rendered: the page's forms may have just set the CSRF secret the tag covers
            return http_cache.framed(
                request, cast(TemplateResponse, response).render(), context["body"], self._validators()
            )
        return response

    def _validators(self) -> http_cache.Validators:
        return http_cache.page_validators(self.request, self.chain.segments, self.membership.role, self.switchable)

    def _record_reads(self) -> None:
        access_records(sessions=self.chain.segments, request=self.request, via="web")

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(first=self.chain.segments[0], **kwargs)
        # the content, made once for every reader (nothing in it is the reader's)
        key = http_cache.content_key("whole-body", self.request, self.chain.segments)
        body = page_cache.cached(key)
        if body is None:
            body, readable = self._body(context)
            if readable:
                body = body.compressed()
                page_cache.keep(key, body)
        else:
            readable = True
        self._record_reads()
        return {**context, "body": body, "readable": readable}

    def _body(self, context: dict[str, Any]) -> tuple[Body, bool]:
        """The page's content, and whether the conversation could be read."""
        chain = self.chain
        form = MessageFilterForm(self.request.GET)
        form.is_valid()
        params = filter_params(form)
        page, joined, segments = whole_page(chain.segments, params)
        reading = page_cache.reading_of(page, form)
        overview_html, prompt_count = joined.overview(reading.turn_window if reading is not None else (0, 0))
        context = {
            **context,
            "segments": segments,
            "commits": sum(1 for session in chain.segments if session.kind == Kind.CHECKPOINT),
            "gaps": chain.gaps,
            "form": form,
            "role_choices": ROLE_CHOICES,
            "reading": reading,
            "params": params,
            "overview_html": overview_html,
            "prompt_count": prompt_count,
            "agent_session_id": self.agent_session_id,
        }
        return Body.of("frontend/session/whole_main.html", context), reading is not None


def whole_page(sessions: list[Session], params: dict[str, Any]) -> tuple[page_cache.Page, Joined, list[whole.Segment]]:
    """How the whole-conversation page of these segments is made: the page, the joined documents
    (read only when the cache lacks something) and where each segment sits."""
    joined = Joined(sessions)
    segments = whole.placed(sessions, joined.spans())
    urls = [page_where(session).session_url for session in sessions]
    links = {segment.number: (urls[segment.number - 1], commit_url(segment.session)) for segment in segments}
    where = whole.WholeWhere(
        urls[0],
        page_where(sessions[0]).author,
        starts=tuple(segment.first for segment in segments),
        urls=tuple(urls),
    )
    write = whole.BoundaryWriter(segments, links)
    return page_cache.Page(sessions, "whole-page", where, params, joined.load, write), joined, segments


def warm(session: Session) -> None:
    """Render page 1 of the whole conversation ``session`` is a segment of, and its overview, as a
    reader without filters asks for them, when the segments hold at least ``WARM_MIN_RAW_BYTES``:
    the first view of a long agent session's whole conversation is then served from the cache."""
    if not session.agent_session_id:
        return
    if not session.previous_id and not session.start_offset and session.raw_size_bytes < page_cache.WARM_MIN_RAW_BYTES:
        return  # a small first segment is its whole conversation so far: no query, as the worker's budget asks
    with project_scope(session.project):  # the worker announces a session outside any request's scope
        chain = stitch.agent_session_chain(project=session.project, agent_session_id=session.agent_session_id)
    if sum(s.raw_size_bytes for s in chain.segments) < page_cache.WARM_MIN_RAW_BYTES:
        return
    if not all(s.content_storage_key for s in chain.segments):  # a segment still processing: warmed when it ends
        return
    form = MessageFilterForm({})
    form.is_valid()
    page, joined, _ = whole_page(chain.segments, {})
    reading = page_cache.reading_of(page, form)
    if reading is not None:
        joined.overview(reading.turn_window)


class Joined:
    """The segments' documents joined, read only when the page cache lacks what this request needs:
    where the segments sit, the layout of the filters asked for, or the overview of the prompts shown.
    Each is kept under the segments' content generations (``page_cache.frame_key``)."""

    def __init__(self, sessions: list[Session]) -> None:
        self.sessions = sessions
        self.key = page_cache.frame_key(sessions)
        self._document: tuple[dict[str, Any], bool] | None = None
        self._spans: list[whole.Span] | None = None
        self._entries: list[whole.PromptEntry] | None = None

    def load(self) -> tuple[dict[str, Any] | None, bool]:
        if self._document is None:
            loaded = [(session, document_load(session)) for session in self.sessions]
            document, segments = whole.join([(session, found) for session, (found, _) in loaded])
            complete = not any(unavailable for _, (_, unavailable) in loaded)
            self._document = (document, complete)
            self._spans, self._entries = whole.spans(segments), whole.overview(document, segments)
            if complete and self.key is not None:  # an outage's missing segments are not kept
                page_cache.keep_many({self.key: self._spans, f"{self.key}:entries": self._entries})
        return self._document

    def spans(self) -> list[whole.Span]:
        if self._spans is None:
            self._spans = page_cache.cached(self.key)
        if self._spans is None:
            self.load()
        return self._spans or []

    def overview(self, window: tuple[int, int], page: str = "") -> tuple[Markup, int]:
        """The overview's entries for the turns the page's panel lists (``Reading.turn_window``), as
        HTML, and how many prompts there are: kept per window, so a page served from the cache
        renders no overview either. ``page``: the whole conversation's URL, for an overview shown
        on another page (the pull request's)."""
        key = f"{self.key}:overview:{window[0]}:{window[1]}:{page}" if self.key else None
        found = page_cache.cached(key)
        if found is not None:
            return cast(tuple[Markup, int], found)
        if self._entries is None:
            self._entries = page_cache.cached(f"{self.key}:entries") if self.key else None
        if self._entries is None:
            self.load()
        entries = self._entries or []
        shown = entries[window[0] : window[1]]
        commit_urls = {s.commit_hash: commit_url(s) for e in shown for s in e.commits if s.commit_hash}
        made = (whole.overview_html(shown, commit_urls, page), len(entries))
        if self._document is None or self._document[1]:
            page_cache.keep(key, made)
        return made


def commit_url(session: Session) -> str:
    """The commit permalink of a segment, or "" for a stored hash no route accepts."""
    if not session.commit_hash:
        return ""
    try:
        return reverse("commit-link", kwargs={"project": session.project.slug, "sha": session.commit_hash})
    except NoReverseMatch:
        return ""

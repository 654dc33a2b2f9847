"""The session list of a project, the session page, one full message, the raw download."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from functools import cached_property
from typing import Any, cast

from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.gzip import gzip_page
from django.views.generic import TemplateView

from frontend import http_cache, stylesheets
from frontend.access import PAGE_READ, ProjectPageMixin
from frontend.forms import ROLE_CHOICES, MessageFilterForm, SessionListForm
from frontend.http_cache import Body
from frontend.pagination import SessionListPagination, keyset_page
from frontend.session_page import page_cache
from frontend.session_page.load import document_load, filter_params
from frontend.session_page.present import full_message_html, viewer_title
from frontend.session_page.render import Where
from integrations.models import PullRequest
from integrations.selectors import pull_requests_of_commits
from projects import selectors as project_selectors
from projects.models import Role
from sessions_app import blobs, selectors
from sessions_app.audit import access_record
from sessions_app.filters import SessionFilter
from sessions_app.links import commit_web_url, session_web_url
from sessions_app.models import AccessLog, Kind, Session, Status

logger = logging.getLogger(__name__)

MESSAGE_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z")


class SessionListView(ProjectPageMixin, TemplateView):
    """``/p/{project}/``: filters in the URL, keyset pages, one query for the rows."""

    required_roles = PAGE_READ
    template_name = "frontend/session_list.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        authors = [m.user.email for m in project_selectors.membership_list(project=self.project)]
        form = SessionListForm(self.request.GET, authors=authors)
        form.is_valid()
        page = keyset_page(SessionListPagination(), self._rows(form), self.request)
        return super().get_context_data(
            form=form,
            page=page,
            # a hit opens with the query applied, so the reader lands on the match
            search=(getattr(form, "cleaned_data", {}).get("q") or "").strip(),
            branches=selectors.session_branches(project=self.project),
            params=self.request.GET,
            **kwargs,
        )

    def _rows(self, form: SessionListForm) -> Any:
        if form.errors:  # a filter that cannot be applied: its error, never the unfiltered list
            return selectors.session_list_queryset(project=self.project).none()
        rows = SessionFilter(form.api_filters(), queryset=selectors.session_list_queryset(project=self.project)).qs
        text = (form.cleaned_data.get("q") or "").strip()
        return selectors.session_list_with_snippets(rows, text) if text else rows


class SessionObjectMixin(ProjectPageMixin):
    required_roles = PAGE_READ

    def get_session(self) -> Session:
        session = selectors.session_page_get(project=self.project, session_id=self.kwargs["session_id"])
        if session is None:
            raise Http404("No such session.")
        return session


@method_decorator(stylesheets.allowed(), name="dispatch")
@method_decorator(gzip_page, name="dispatch")
class SessionView(SessionObjectMixin, TemplateView):
    """``/p/{project}/s/{id}``: the conversation, filtered server-side, one page at a time.

    Served gzip-compressed (the largest HTML we send). Only this page: BREACH needs a secret
    next to reflected text, and its one secret, the CSRF token, is masked anew per response
    (docs/ui.md); pages showing API tokens or share tokens stay uncompressed.
    """

    template_name = "frontend/session.html"

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        self.session = session = self.get_session()
        readable = session.status not in (Status.PROCESSING, Status.FAILED)
        if readable and (unchanged := http_cache.not_modified(request, self._validators)) is not None:
            access_record(session=session, request=request, via="web")  # the browser's copy is read
            return unchanged
        if readable and "through" in request.GET:
            where = page_cache.page_where(session)
            return later_pages(
                request,
                lambda params: session_page(session, where, params),
                lambda: access_record(session=session, request=request, via="web"),
                lambda: http_cache.page_validators(request, [session], self.membership.role, self.switchable),
                http_cache.content_key("session-later", request, [session]),
            )
        context = self.get_context_data(**kwargs)
        response = self.render_to_response(context, status=503 if context.get("unavailable") else 200)
        if readable and not context.get("unavailable"):
            # once rendered: the page's forms may have just set the CSRF secret the tag covers
            return http_cache.framed(
                request, cast(TemplateResponse, response).render(), context["body"], self._validators()
            )
        return response

    def _validators(self) -> http_cache.Validators:
        return http_cache.page_validators(
            self.request, [self.session], self.membership.role, self.switchable, self._shown()
        )

    @cached_property
    def pull_requests(self) -> list[PullRequest]:
        return pull_requests_of_commits(project=self.project, shas=[self.session.commit_hash or ""])

    def _shown(self) -> list[Any]:
        """What the page lists besides the session: its commit's pull requests."""
        return [[pr.pk, pr.number, pr.title] for pr in self.pull_requests]

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        session = self.session
        context = super().get_context_data(session=session, **kwargs)
        readable = session.status not in (Status.PROCESSING, Status.FAILED)
        # the content, made once for every reader but admins (whose page lists the access log)
        key = None
        if readable and self.membership.role != Role.ADMIN:
            key = http_cache.content_key("session-body", self.request, [session], self._shown())
        body = page_cache.cached(key)
        if body is not None:
            access_record(session=session, request=self.request, via="web")
            return {**context, "body": body}
        form = MessageFilterForm(self.request.GET)
        form.is_valid()
        params = filter_params(form)
        reading = None
        if readable:
            # after the permission checks (frontend/session_page/page_cache.py)
            reading = page_cache.reading_of(session_page(session, page_cache.page_where(session), params), form)
            if reading is not None:
                access_record(session=session, request=self.request, via="web")  # before the admin's list
        context.update(
            form=form,
            role_choices=ROLE_CHOICES,
            unavailable=readable and reading is None,
            reading=reading,
            web_url=session_web_url(session),
            markdown_link=markdown_link(session),
            params=params,
            access_log=self._access_log(session),
            also_in=self._also_in(form),
            pull_requests=self.pull_requests,
        )
        body = Body.of("frontend/session/main.html", context)
        if reading is not None and key is not None:
            body = body.compressed()
            page_cache.keep(key, body)
        return {**context, "body": body}

    def _also_in(self, form: MessageFilterForm) -> str:
        """The choice of sessions holding ``?at=``'s message, when its permalink said there are several."""
        at = str(form.value("at") or "")
        if not form.value("also") or not MESSAGE_UUID.match(at):
            return ""
        return reverse("message-link", kwargs={"project": self.project.slug, "message_uuid": at}) + "?all"

    def _access_log(self, session: Session) -> list[AccessLog] | None:
        """The latest reads of this session, for admins (after this read was recorded)."""
        if self.membership.role != Role.ADMIN:
            return None
        return list(AccessLog.objects.filter(project=self.project, session_id=session.pk).select_related("user")[:5])


def later_pages(
    request: HttpRequest,
    page: Callable[[dict[str, Any]], page_cache.Page],
    record: Callable[[], None],
    validators: Callable[[], http_cache.Validators],
    key: str,
) -> HttpResponse:
    """``?page=N&through=M``: the cards of pages N to M and the link past them, without the page around
    them: what the script appends in one request (docs/ui.md, "Later pages"). A read, as any page.
    Nothing in it is the reader's: rendered and compressed once, kept under ``key`` for every reader
    (``http_cache.content_key``)."""
    kept = http_cache.kept_gzipped(request, key)
    if kept is not None:
        record()
        return http_cache.gzipped(HttpResponse(), kept, validators())
    form = MessageFilterForm(request.GET)
    if not form.is_valid():
        return HttpResponse("Bad page request.", status=400, content_type="text/plain")
    params = filter_params(form)
    found = page_cache.pages_ahead(page(params), form)
    if found is None:
        return HttpResponse("The stored conversation cannot be read right now.", status=503, content_type="text/plain")
    record()
    context = {"readings": found, "params": params}
    response = TemplateResponse(request, "frontend/session/later.html", context).render()
    return http_cache.keep_gzipped(request, key, response, validators())


def session_page(session: Session, where: Where, params: dict[str, Any]) -> page_cache.Page:
    """How a page of one session's conversation is made (the session page's and the shared page's)."""
    return page_cache.Page([session], "session-page", where, params, lambda: _loaded(session))


def _loaded(session: Session) -> tuple[dict[str, Any] | None, bool]:
    document, unavailable = document_load(session)
    return document, not unavailable


def markdown_link(session: Session) -> str:
    """A Markdown link for a pull-request comment: a checkpoint links its ``/c/{sha}`` permalink.

    The commit permalink keeps working when the session is re-uploaded or its commit relinked
    after a rebase; a task or manual session links the session itself.
    """
    title = " ".join((session.headline or "Session").split()).replace("[", "\\[").replace("]", "\\]")
    ref = session.ref
    return f"[{title}{f' ({ref})' if ref else ''}]({_pr_url(session)})"


def _pr_url(session: Session) -> str:
    if (
        session.kind == Kind.CHECKPOINT
        and session.commit_hash
        and selectors.COMMIT_PREFIX.fullmatch(session.commit_hash)
    ):
        return commit_web_url(session.project, session.commit_hash)
    return session_web_url(session)


class SessionMessageView(SessionObjectMixin, TemplateView):
    """``/p/{project}/s/{id}/m/{index}``: one message in full (long outputs are cut on the session page)."""

    template_name = "frontend/message.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        session = self.get_session()
        document, unavailable = document_load(session)
        messages = (document or {}).get("messages") or []
        index = self.kwargs["index"]
        if unavailable or not 0 <= index < len(messages):
            raise Http404("No such message.")
        message = messages[index]
        access_record(session=session, request=self.request, via="web")
        call = _call_of(messages, message)
        html = full_message_html(message, call)
        return super().get_context_data(
            session=session,
            message=message,
            html=html,
            heading=viewer_title(message, call),
            file_path=_input_path(call),
            **kwargs,
        )


def _call_of(messages: list[dict[str, Any]], message: dict[str, Any]) -> dict[str, Any] | None:
    """The tool call a result answers (the nearest before it with the same tool id), or None."""
    if message.get("kind") != "tool_result":
        return None
    tool_id = (message.get("tool") or {}).get("id")
    if not isinstance(tool_id, str) or not tool_id:
        return None
    for candidate in reversed(messages[: message["index"]]):
        if candidate.get("kind") == "tool_use" and (candidate.get("tool") or {}).get("id") == tool_id:
            return candidate
    return None


def _input_path(call: dict[str, Any] | None) -> str:
    data = ((call or {}).get("tool") or {}).get("input")
    path = data.get("file_path") if isinstance(data, dict) else None
    return path if isinstance(path, str) else ""


class SessionRawView(SessionObjectMixin, View):
    """``/p/{project}/s/{id}/raw``: the transcript as uploaded (gzip JSONL)."""

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> FileResponse:
        session = self.get_session()
        try:
            stream = blobs.open_stream(session.raw_storage_key)
        except (blobs.StorageUnavailable, FileNotFoundError):
            raise Http404("The raw transcript is not available right now.") from None
        access_record(session=session, request=request, via="raw")
        response = FileResponse(
            stream, content_type="application/gzip", as_attachment=True, filename=f"{session.pk}.jsonl.gz"
        )
        response["Content-Encoding"] = "identity"
        return response

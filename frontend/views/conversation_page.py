"""``/p/{project}/s/{id}/conversation``: every segment of the agent session a session belongs to, on one
page. Named by one of its sessions, so the link never carries a teammate's agent session id in its path.

The session page's reading (filters, Find, lazy pages, cards, steps, turns) over the segments'
documents joined by ``frontend.whole``, with each commit boundary marked and an overview per
prompt above the conversation (``docs/ui.md``).
"""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.urls import NoReverseMatch, reverse
from django.views.generic import TemplateView

from frontend import whole
from frontend.access import PAGE_READ
from frontend.forms import ROLE_CHOICES, MessageFilterForm
from frontend.page_cache import page_where
from frontend.reading import read
from frontend.views.sessions import SessionObjectMixin, _document, _filter_params
from sessions_app import stitch
from sessions_app.audit import access_record
from sessions_app.models import Kind, Session


class WholeConversationView(SessionObjectMixin, TemplateView):
    required_roles = PAGE_READ
    template_name = "frontend/whole_conversation.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        agent_session_id = self.get_session().agent_session_id
        if not agent_session_id:
            raise Http404("This session records no agent session.")
        chain = stitch.agent_session_chain(project=self.project, agent_session_id=agent_session_id)
        if not chain.segments:
            raise Http404("No such agent session.")
        documents = [(session, _document(session)[0]) for session in chain.segments]
        document, segments = whole.join(documents)
        form = MessageFilterForm(self.request.GET)
        form.is_valid()
        params = _filter_params(form)
        urls = [page_where(session).session_url for session in chain.segments]
        links = {segment.number: (urls[segment.number - 1], _commit_url(segment.session)) for segment in segments}
        where = whole.WholeWhere(
            urls[0],
            page_where(chain.segments[0]).author,
            starts=tuple(segment.first for segment in segments),
            urls=tuple(urls),
        )
        reading = read(document, form, where=where, params=params, write=whole.BoundaryWriter(segments, links))
        for session in chain.segments:
            access_record(session=session, request=self.request, via="web")
        entries = whole.overview(document, segments)
        commit_urls = {s.commit_hash: _commit_url(s) for e in entries for s in e.commits if s.commit_hash}
        return super().get_context_data(
            first=chain.segments[0],
            segments=segments,
            commits=sum(1 for session in chain.segments if session.kind == Kind.CHECKPOINT),
            gaps=chain.gaps,
            form=form,
            role_choices=ROLE_CHOICES,
            reading=reading,
            params=params,
            overview_html=whole.overview_html(entries, commit_urls),
            prompt_count=len(entries),
            agent_session_id=agent_session_id,
            **kwargs,
        )


def _commit_url(session: Session) -> str:
    """The commit permalink of a segment, or "" for a stored hash no route accepts."""
    if not session.commit_hash:
        return ""
    try:
        return reverse("commit-link", kwargs={"project": session.project.slug, "sha": session.commit_hash})
    except NoReverseMatch:
        return ""

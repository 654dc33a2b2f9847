"""``/p/{project}/s/{id}/files``: the session's commit, file by file, with the line ranges the
agent wrote (each linking to the message of the tool call that wrote it) and those a human did.

Read from the session's stored Agent Trace record (``sessions_app.attribution``); the prompt of
each step is quoted from the content document, so opening this page is a read of the content
(access log, via ``web``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.views.generic import TemplateView

from frontend.session_page.load import document_load
from frontend.views.sessions import SessionObjectMixin
from sessionledger.core.attribution import VENDOR
from sessionledger.core.attribution_record import step_of
from sessions_app.attribution import selectors
from sessions_app.attribution.selectors import MAX_EARLIER_SEGMENTS
from sessions_app.attribution.validation import only_permalinks
from sessions_app.audit import access_record
from sessions_app.models import Attribution

PROMPT_PREVIEW = 160


@dataclass
class Span:
    start: int
    end: int
    contributor: str
    url: str = ""
    model: str = ""
    step: str = ""
    turn: int | None = None
    tool: str = ""
    prompt: str = ""

    @property
    def lines(self) -> int:
        return self.end - self.start + 1


@dataclass
class FileRow:
    path: str
    spans: list[Span] = field(default_factory=list)

    @property
    def ai_lines(self) -> int:
        return sum(s.lines for s in self.spans if s.contributor == "ai")

    @property
    def added_lines(self) -> int:
        return sum(s.lines for s in self.spans)


def file_rows(record: dict[str, Any], prompts: dict[str, str]) -> list[FileRow]:
    steps = record.get("metadata", {}).get(VENDOR, {}).get("steps", {})
    rows = []
    for entry in record.get("files") or []:
        row = FileRow(str(entry.get("path")))
        for conversation in entry.get("conversations") or []:
            step = step_of(conversation)
            facts = steps.get(step) or {}
            for span in conversation.get("ranges") or []:
                row.spans.append(
                    Span(
                        start=span["start_line"],
                        end=span["end_line"],
                        contributor=(conversation.get("contributor") or {}).get("type", "unknown"),
                        url=conversation.get("url") or "",
                        model=(conversation.get("contributor") or {}).get("model_id", ""),
                        step=step,
                        turn=facts.get("turn") if isinstance(facts.get("turn"), int) else None,
                        tool=str(facts.get("tool") or ""),
                        prompt=prompts.get(str(facts.get("prompt") or ""), ""),
                    )
                )
        row.spans.sort(key=lambda s: s.start)
        rows.append(row)
    return rows


def _prompts(session: Any, record: dict[str, Any]) -> dict[str, str]:
    """The prompts' text, from this segment or earlier ones of the conversation (steps may be there)."""
    steps = record.get("metadata", {}).get(VENDOR, {}).get("steps", {}).values()
    wanted = {str(s.get("prompt")) for s in steps if s.get("prompt")}
    found: dict[str, str] = {}
    current = session
    for _ in range(MAX_EARLIER_SEGMENTS + 1):
        if current is None or not wanted - found.keys():
            break
        document, _ = document_load(current)
        for message in (document or {}).get("messages") or []:
            if message.get("uuid") in wanted:
                text = " ".join(str(message.get("content") or "").split())
                found[message["uuid"]] = text if len(text) <= PROMPT_PREVIEW else text[: PROMPT_PREVIEW - 1] + "…"
        current = current.previous
    return found


class SessionFilesView(SessionObjectMixin, TemplateView):
    template_name = "frontend/attribution/files.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        session = self.get_session()
        found: Attribution | None = selectors.attribution_of_session(session=session)
        record = found.record if found is not None else None
        rows = []
        if record:
            # Records stored before links were checked on input may hold any address: the same check.
            rows = file_rows(only_permalinks(record, session.project), _prompts(session, record))
            access_record(session=session, request=self.request, via="web")
        return super().get_context_data(
            session=session,
            attribution=found,
            rows=rows,
            ai_lines=sum(r.ai_lines for r in rows),
            added_lines=sum(r.added_lines for r in rows),
            **kwargs,
        )

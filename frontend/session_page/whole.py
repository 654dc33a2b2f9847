"""The whole conversation of an agent session: its segments as one document, and an overview per prompt.

An agent session is captured as one session per commit (``sessions_app.stitch``: segments in
offset order). This page joins their content documents into one, renumbering messages and turns
so anchors, turn links and steps stay unique, and hands it to the session page's reading
(``frontend.session_page.reading.read``): the same filters, Find, paging and cards. Commit boundaries are
drawn between the cards of two segments; a card's "full message" link goes to its own segment.

Cost: one content document per segment, joined by shallow copies of the messages, laid out and
walked by the overview once; the page cache keeps the layout, each page, the segments' spans and the
overview per window (``frontend.views.conversation_page.Joined``), so a later view reads no blob.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from frontend.session_page.conversation import Card, message_anchor
from frontend.session_page.markdown import preview_markdown
from frontend.session_page.render import Where, cards_html
from frontend.templating import Macros, macros
from sessions_app.models import Kind, Session

PROMPT_LIMIT = 160
CLOSING_LIMIT = 240


@dataclass(frozen=True)
class Segment:
    """One captured segment in the joined document: its session and the messages it holds."""

    session: Session
    number: int  # 1-based
    first: int  # the joined index of its first message
    count: int
    available: bool = True

    @property
    def last(self) -> int:
        return self.first + self.count - 1


@dataclass(frozen=True)
class WholeWhere(Where):
    """Card links of the joined document: a message's full view is on its own segment's page."""

    starts: tuple[int, ...] = ()
    urls: tuple[str, ...] = ()

    def message_url(self, index: int) -> str:
        position = max(bisect_right(self.starts, index) - 1, 0)
        return f"{self.urls[position]}/m/{index - self.starts[position]}"


def join(documents: list[tuple[Session, dict[str, Any] | None]]) -> tuple[dict[str, Any], list[Segment]]:
    """One document of the segments' documents (None: content unavailable), and where each segment sits."""
    messages: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    segments: list[Segment] = []
    for number, (session, document) in enumerate(documents, start=1):
        offset = len(messages)
        own = (document or {}).get("messages") or []
        messages.extend({**message, "index": message["index"] + offset} for message in own)
        for turn in (document or {}).get("turns") or []:
            moved = {**turn, "index": len(turns), "first_message": turn["first_message"] + offset}
            if "last_message" in turn:
                moved["last_message"] = turn["last_message"] + offset
            turns.append(moved)
        segments.append(Segment(session, number, offset, len(own), document is not None))
    return {"messages": messages, "turns": turns}, segments


def segment_of(segments: list[Segment], index: int) -> Segment:
    starts = [segment.first for segment in segments]
    return segments[max(bisect_right(starts, index) - 1, 0)]


def boundaries_after(cards: list[Card], following: int | None, segments: list[Segment]) -> dict[int, list[Segment]]:
    """The segments that end after each card of a page (keyed by the card's first message index): a
    segment ends after a card when the next shown card, on this page or first on the next one
    (``following``: its first message), belongs to a later segment, or none follows."""
    ends: dict[int, list[Segment]] = {}
    for position, card in enumerate(cards):
        after = cards[position + 1].first["index"] if position + 1 < len(cards) else following
        own = segment_of(segments, card.first["index"]).number
        upto = segment_of(segments, after).number - 1 if after is not None else len(segments)
        if upto >= own:
            ends[card.first["index"]] = segments[own - 1 : upto]
    return ends


@dataclass
class PromptEntry:
    """One human prompt of the whole conversation, as the overview lists it."""

    number: int
    prompt: str
    anchor: str
    tools: list[tuple[str, int]] = field(default_factory=list)  # (tool name lowercased, calls), most first
    closing: str = ""
    commits: list[Session] = field(default_factory=list)


def _short(value: Any, limit: int) -> str:
    text = " ".join(str(value or "")[: limit * 4].split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def overview(document: dict[str, Any], segments: list[Segment]) -> list[PromptEntry]:
    """One entry per turn: its prompt, its tool calls by name (sub-agents' calls are under their Task),
    the agent's last text, and the checkpoints whose segment ends inside it (the commits made then)."""
    messages = document.get("messages") or []
    turns = document.get("turns") or []
    starts = [turn["first_message"] for turn in turns]
    entries = [
        PromptEntry(
            number,
            _short(turn.get("prompt"), PROMPT_LIMIT) or "(no text)",
            message_anchor(messages[turn["first_message"]]),
        )
        for number, turn in enumerate(turns, start=1)
    ]
    if not entries:
        return []
    counts: list[Counter[str]] = [Counter() for _ in entries]
    for message in messages:
        position = bisect_right(starts, message["index"]) - 1
        if position < 0 or message.get("sidechain"):
            continue
        if message.get("kind") == "tool_use":
            tool = message.get("tool")
            name = tool.get("name") if isinstance(tool, dict) else None
            counts[position][str(name or "tool").lower()] += 1
        elif message.get("role") == "assistant" and message.get("kind") == "text":
            entries[position].closing = _short(message.get("content"), CLOSING_LIMIT)
    for entry, counter in zip(entries, counts, strict=True):
        entry.tools = sorted(counter.items(), key=lambda pair: (-pair[1], pair[0]))
    for segment in segments:
        if segment.session.kind == Kind.CHECKPOINT and segment.session.commit_hash and segment.count:
            position = bisect_right(starts, segment.last) - 1
            entries[max(position, 0)].commits.append(segment.session)
    return entries


@dataclass(frozen=True)
class BoundaryWriter:
    """The cards of a page with a commit boundary after the last card of each segment."""

    segments: list[Segment]
    links: dict[int, tuple[str, str]]  # segment number -> (session URL, commit permalink or "")

    def __call__(self, cards: list[Card], where: Where, following: int | None) -> str:
        ends = boundaries_after(cards, following, self.segments)
        parts: list[str] = []
        run: list[Card] = []
        for card in cards:
            run.append(card)
            ended = ends.get(card.first["index"])
            if ended:
                parts.append(cards_html(run, where))
                parts.append(_macros().boundary(ended, len(self.segments), self.links))
                run = []
        if run:
            parts.append(cards_html(run, where))
        return Markup("").join(parts)


Span = tuple[int, int, bool]  # a segment's place in the joined document: (first, count, available)


def spans(segments: list[Segment]) -> list[Span]:
    return [(segment.first, segment.count, segment.available) for segment in segments]


def placed(sessions: list[Session], kept: list[Span]) -> list[Segment]:
    """The segments of ``sessions`` where ``spans`` (kept in the page cache) put them."""
    return [
        Segment(session, number, first, count, available)
        for number, (session, (first, count, available)) in enumerate(zip(sessions, kept, strict=True), start=1)
    ]


def overview_html(entries: list[PromptEntry], commit_urls: dict[str, str], page: str = "") -> Markup:
    """The overview's list; ``page``: the whole-conversation page's URL when the list is shown elsewhere."""
    return _macros().overview(entries, commit_urls, page)


def _macros() -> Macros:
    return macros("frontend/whole.html", {"preview_md": preview_markdown})

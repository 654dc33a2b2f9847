"""What the session page shows of a content document under the reader's filters.

Filtering is the selectors' (the API applies the same); grouping, paging and HTML are the
page's. A reading is made in two steps so that one request costs its page, not the session:

- ``lay_out`` walks the whole document once per filter (O(document)): which messages show, their
  cards cut into pages, where each turn, step and message landed, the totals. It makes no HTML.
  ``frontend.session_page.page_cache`` keeps the ``Layout`` and each page's cards apart, so another page of the
  same filter reads one small entry.
- ``render_page`` turns one page's cards into HTML, with side panels bounded to ``PANEL_ENTRIES``
  entries around that page (a session of thousands of tiny turns would otherwise send megabytes of
  turn links with every page).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from frontend import format as fmt
from frontend.forms import ALL_ROLES, MessageFilterForm
from frontend.session_page.conversation import (
    Card,
    Paged,
    anchors_of,
    build_cards,
    message_anchor,
    paginate,
    with_tool_partners,
)
from frontend.session_page.present import present
from frontend.session_page.render import Where, cards_html, turns_html
from frontend.session_page.steps import KINDS, Step, minimap_html, outline, outline_html
from sessionledger.core.formats.facts import time_span
from sessions_app.selectors import filter_messages, role_bucket

PROMPT_PREVIEW = 90
PANEL_ENTRIES = 400  # turns, steps or overview entries one page lists, centred on the page shown
AHEAD_PAGES = 8  # later pages the script asks for in one request (``page_cache.pages_ahead``)


@dataclass(slots=True)
class TurnLink:
    number: int  # 1-based, as people count turns (and as `fork --turn N` does)
    prompt: str
    clock: str  # HH:MM:SS (UTC), preformatted: a long session has hundreds of turns
    iso: str
    page: int | None  # None: every message of the turn is hidden by the filters
    anchor: str | None
    href: str | None
    index: int | None = None  # the message it lands on (the script orders targets by it: data-i)


@dataclass(slots=True)
class PageCards:
    """One page of a layout: its cards, and the first message of the next page's first card (a commit
    boundary after this page's last card depends on it)."""

    cards: list[Card]
    following: int | None


@dataclass
class Layout:
    """Everything a page of ``document`` under one filter needs but its own cards (see the module)."""

    total: int
    shown: int
    page_count: int
    turns: list[TurnLink]
    steps: list[Step]
    usage: dict[str, int]
    first_timestamp: str | None
    last_timestamp: str | None
    located: dict[int, int]  # shown message index -> its page
    uuids: dict[str, int]  # message uuid -> index of the first message with it (for ?at=)
    results_hidden: bool
    minimap_html: str


@dataclass
class Reading:
    total: int
    shown: int
    page_count: int
    page: int
    html: str  # the cards of this page
    turns: list[TurnLink]  # the turns the panel lists (at most PANEL_ENTRIES, around this page)
    usage: dict[str, int]
    first_timestamp: str | None
    last_timestamp: str | None
    steps: list[Step] = field(default_factory=list)  # likewise
    # The message asked for with ?at=, when shown on this page: its element's id and those of the
    # blocks holding it, outermost first (conversation.anchors_of), space-separated.
    at: str = ""
    # The side panels as HTML, made once with the page: a cached page is served without rebuilding them.
    turns_html: str = ""
    steps_html: str = ""
    minimap_html: str = ""
    turn_count: int = 0
    step_counts: dict[str, int] = field(default_factory=dict)
    turn_window: tuple[int, int] = (0, 0)  # the turns listed: [start, stop) of the document's turns

    @property
    def previous_page(self) -> int | None:
        return self.page - 1 if self.page > 1 else None

    @property
    def previous_param(self) -> int | None:
        return self.page - 1 if self.page > 2 else None

    @property
    def next_page(self) -> int | None:
        return self.page + 1 if self.page < self.page_count else None

    @property
    def ahead_through(self) -> int | None:
        """The last of the later pages the script fetches in one request after this one."""
        return min(self.page_count, self.page + AHEAD_PAGES) if self.next_page else None


CardsWriter = Callable[[list[Card], Where, int | None], str]


def cards_only(cards: list[Card], where: Where, following: int | None) -> str:
    return cards_html(cards, where)


def read(
    document: dict[str, Any],
    form: MessageFilterForm,
    *,
    where: Where,
    params: dict[str, Any],
    write: CardsWriter = cards_only,
) -> Reading:
    """The page of ``document`` that ``form`` asks for; ``params`` are the filters links must keep;
    ``write`` turns the page's cards into HTML (the whole-conversation page adds commit boundaries)."""
    layout, pages = lay_out(document, form, params=params)
    page = page_number(layout, form)
    return render_page(layout, pages[page - 1], page, form, where=where, write=write)


def lay_out(
    document: dict[str, Any], form: MessageFilterForm, *, params: dict[str, Any]
) -> tuple[Layout, list[PageCards]]:
    """The layout of ``document`` under ``form``'s filters (its page and ``at`` aside), and its pages."""
    messages = document.get("messages") or []
    shown = matched = messages
    roles = None
    if form.narrowed:
        roles = form.roles if set(form.roles) != set(ALL_ROLES) else None
        since, until, text = form.value("since"), form.value("until"), form.value("q")
        matched = filter_messages(messages, buckets=roles, since=since, until=until, text=text)
        allowed = None if roles is None else (lambda message: role_bucket(message) in roles)
        shown = with_tool_partners(messages, matched, allowed=allowed)
    paged = paginate(build_cards(shown))
    base = fmt.query_string(params)[1:]
    turns = [_turn_link(turn, paged, base) for turn in document.get("turns") or []]
    steps = outline(messages)
    for step in steps:
        _locate_step(step, paged.located.get(step.index), base, messages[step.index])
    first, last = time_span(messages)
    uuids: dict[str, int] = {}
    for message in messages:
        if isinstance(message.get("uuid"), str):
            uuids.setdefault(message["uuid"], message["index"])
    following = [pages[0].first["index"] if pages else None for pages in paged.pages[1:]] + [None]
    layout = Layout(
        total=len(messages),
        shown=len(matched),
        page_count=paged.count,
        turns=turns,
        steps=steps,
        usage=token_totals(messages),
        first_timestamp=first,
        last_timestamp=last,
        located={index: where[0] for index, where in paged.located.items()},
        uuids=uuids,
        results_hidden=roles is not None and "tool" not in roles,
        minimap_html=minimap_html(steps, len(messages)),
    )
    return layout, [PageCards(cards, after) for cards, after in zip(paged.pages, following, strict=True)]


def page_number(layout: Layout, form: MessageFilterForm) -> int:
    """The page ``form`` asks for; a permalink (``?at=``) asks for the page holding its message."""
    at = message_at(layout, form.value("at"))
    if at is not None and at in layout.located:
        return layout.located[at]
    return min(form.value("page") or 1, layout.page_count)


def render_page(
    layout: Layout,
    page_cards: PageCards,
    page: int,
    form: MessageFilterForm,
    *,
    where: Where,
    write: CardsWriter = cards_only,
) -> Reading:
    """Page ``page`` of ``layout`` as HTML: O(the page), whatever the session's length."""
    cards = page_cards.cards
    present(cards, form.value("q") or "")
    at = message_at(layout, form.value("at"))
    at_anchors = anchors_of(cards, at) if at is not None else []
    where = replace(where, results_hidden=layout.results_hidden)
    start, stop = panel_window([turn.page for turn in layout.turns], page)
    turns = layout.turns[start:stop]
    steps = _steps_around(layout.steps, page)
    counts = dict.fromkeys(KINDS, 0)
    for step in layout.steps:
        counts[step.kind] += 1
    return Reading(
        total=layout.total,
        shown=layout.shown,
        page_count=layout.page_count,
        page=page,
        html=write(cards, where, page_cards.following),
        turns=turns,
        usage=layout.usage,
        first_timestamp=layout.first_timestamp,
        last_timestamp=layout.last_timestamp,
        steps=steps,
        at=" ".join(at_anchors),
        turns_html=turns_html(turns),
        steps_html=outline_html(steps),
        minimap_html=layout.minimap_html,
        turn_count=len(layout.turns),
        step_counts=counts,
        turn_window=(start, stop),
    )


def panel_window(pages: list[int | None], page: int, limit: int = PANEL_ENTRIES) -> tuple[int, int]:
    """[start, stop) of at most ``limit`` panel entries around the first one on ``page`` or later
    (entries are in document order; an entry hidden by the filters, page None, counts where it stands)."""
    if len(pages) <= limit:
        return 0, len(pages)
    here = next((n for n, on in enumerate(pages) if on is not None and on >= page), len(pages))
    start = max(0, min(here - limit // 4, len(pages) - limit))
    return start, start + limit


def _steps_around(steps: list[Step], page: int) -> list[Step]:
    start, stop = panel_window([step.page for step in steps], page)
    return steps[start:stop]


def message_at(layout: Layout, at: str | None) -> int | None:
    """The index of the message ``?at=`` names: its uuid (first message with it) or its index."""
    if not at:
        return None
    if at.isdigit():
        index = int(at)
        return index if index < layout.total else None
    return layout.uuids.get(at)


def _locate_step(step: Step, located: tuple[int, str] | None, base: str, message: dict[str, Any]) -> None:
    if located is None:
        return
    step.page = located[0]
    step.anchor = message_anchor(message)
    query = "&".join(part for part in (base, f"page={step.page}" if step.page > 1 else "") if part)
    step.href = f"?{query}#{step.anchor}"


def _turn_link(turn: dict[str, Any], paged: Paged, base: str) -> TurnLink:
    """A turn-navigation entry; ``base`` is the encoded filters the link keeps."""
    prompt = " ".join(str(turn.get("prompt") or "")[: PROMPT_PREVIEW * 4].split())
    if len(prompt) > PROMPT_PREVIEW:
        prompt = prompt[: PROMPT_PREVIEW - 1] + "…"
    stamp = turn.get("timestamp")
    link = TurnLink(turn["index"] + 1, prompt or "(no text)", fmt.clock(stamp), fmt.iso(stamp), None, None, None)
    link.index = paged.first_shown(turn)
    if link.index is not None:
        link.page, link.anchor = paged.located[link.index]
        query = "&".join(part for part in (base, f"page={link.page}" if link.page > 1 else "") if part)
        link.href = f"?{query}#{link.anchor}"
    return link


USAGE_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def token_totals(messages: list[dict[str, Any]]) -> dict[str, int]:
    """Tokens of the session, each API response counted once (its lines repeat the same usage)."""
    by_response = {m["message_id"]: m["usage"] for m in messages if "message_id" in m and "usage" in m}
    usages = [u for u in by_response.values() if isinstance(u, dict)]
    return {key: sum(_count(u.get(key)) for u in usages) for key in USAGE_KEYS}


def _count(value: Any) -> int:
    """A token count as the document holds it: anything but a number (a hostile document) is 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0

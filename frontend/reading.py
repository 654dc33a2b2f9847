"""What the session page shows of a content document under the reader's filters.

Filtering is the selectors' (the API applies the same); grouping, paging and HTML are the
page's. Only the cards of the requested page are turned into HTML.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from frontend import format as fmt
from frontend.conversation import Card, Paged, anchors_of, build_cards, paginate, with_tool_partners
from frontend.forms import ALL_ROLES, MessageFilterForm
from frontend.present import present
from frontend.render import Where, cards_html, turns_html
from frontend.steps import KINDS, Step, minimap_html, outline, outline_html
from sessionledger.core.formats.facts import time_span
from sessions_app.selectors import filter_messages, role_bucket

PROMPT_PREVIEW = 90


@dataclass(slots=True)
class TurnLink:
    number: int  # 1-based, as people count turns (and as `fork --turn N` does)
    prompt: str
    clock: str  # HH:MM:SS (UTC), preformatted: a long session has hundreds of turns
    iso: str
    page: int | None  # None: every message of the turn is hidden by the filters
    anchor: str | None
    href: str | None


@dataclass
class Reading:
    total: int
    shown: int
    page_count: int
    page: int
    html: str  # the cards of this page
    turns: list[TurnLink]
    usage: dict[str, int]
    first_timestamp: str | None
    last_timestamp: str | None
    steps: list[Step] = field(default_factory=list)
    # The message asked for with ?at=, when shown on this page: its element's id and those of the
    # blocks holding it, outermost first (conversation.anchors_of), space-separated.
    at: str = ""
    # The side panels as HTML, made once with the page: a cached page is served without rebuilding them.
    turns_html: str = ""
    steps_html: str = ""
    minimap_html: str = ""

    @property
    def step_counts(self) -> dict[str, int]:
        counts = dict.fromkeys(KINDS, 0)
        for step in self.steps:
            counts[step.kind] += 1
        return counts

    @property
    def previous_page(self) -> int | None:
        return self.page - 1 if self.page > 1 else None

    @property
    def previous_param(self) -> int | None:
        return self.page - 1 if self.page > 2 else None

    @property
    def next_page(self) -> int | None:
        return self.page + 1 if self.page < self.page_count else None


CardsWriter = Callable[[list[Card], Where, Paged, int], str]


def _cards_only(cards: list[Card], where: Where, paged: Paged, page: int) -> str:
    return cards_html(cards, where)


def read(
    document: dict[str, Any],
    form: MessageFilterForm,
    *,
    where: Where,
    params: dict[str, Any],
    write: CardsWriter = _cards_only,
) -> Reading:
    """The page of ``document`` that ``form`` asks for; ``params`` are the filters links must keep;
    ``write`` turns the page's cards into HTML (the whole-conversation page adds commit boundaries)."""
    messages = document.get("messages") or []
    shown = matched = messages
    if form.narrowed:
        roles = form.roles if set(form.roles) != set(ALL_ROLES) else None
        since, until, text = form.value("since"), form.value("until"), form.value("q")
        matched = filter_messages(messages, buckets=roles, since=since, until=until, text=text)
        allowed = None if roles is None else (lambda message: role_bucket(message) in roles)
        shown = with_tool_partners(messages, matched, allowed=allowed)
        where = replace(where, results_hidden=roles is not None and "tool" not in roles)
    paged = paginate(build_cards(shown))
    page = min(form.value("page") or 1, paged.count)
    at = _message_at(messages, form.value("at"))
    if at is not None and at in paged.located:
        page = paged.located[at][0]  # a permalink: the page holding the message, whatever ?page says
    cards = paged.page(page)
    present(cards, form.value("q") or "")
    at_anchors = anchors_of(cards, at) if at is not None else []
    base = fmt.query_string(params)[1:]
    turns = [_turn_link(turn, paged, base) for turn in document.get("turns") or []]
    steps = outline(messages)
    for step in steps:
        _locate_step(step, paged, base)
    first, last = time_span(messages)
    return Reading(
        total=len(messages),
        shown=len(matched),
        page_count=paged.count,
        page=page,
        html=write(cards, where, paged, page),
        turns=turns,
        usage=token_totals(messages),
        first_timestamp=first,
        last_timestamp=last,
        steps=steps,
        at=" ".join(at_anchors),
        turns_html=turns_html(turns),
        steps_html=outline_html(steps),
        minimap_html=minimap_html(steps, len(messages)),
    )


def _message_at(messages: list[dict[str, Any]], at: str | None) -> int | None:
    """The index of the message ``?at=`` names: its uuid (first message with it) or its index."""
    if not at:
        return None
    if at.isdigit():
        index = int(at)
        return index if index < len(messages) else None
    return next((m["index"] for m in messages if m.get("uuid") == at), None)


def _locate_step(step: Step, paged: Paged, base: str) -> None:
    located = paged.located.get(step.index)
    if located is None:
        return
    step.page = located[0]
    step.anchor = f"m-{step.index}"
    query = "&".join(part for part in (base, f"page={step.page}" if step.page > 1 else "") if part)
    step.href = f"?{query}#{step.anchor}"


def _turn_link(turn: dict[str, Any], paged: Paged, base: str) -> TurnLink:
    """A turn-navigation entry; ``base`` is the encoded filters the link keeps."""
    prompt = " ".join(str(turn.get("prompt") or "")[: PROMPT_PREVIEW * 4].split())
    if len(prompt) > PROMPT_PREVIEW:
        prompt = prompt[: PROMPT_PREVIEW - 1] + "…"
    stamp = turn.get("timestamp")
    link = TurnLink(turn["index"] + 1, prompt or "(no text)", fmt.clock(stamp), fmt.iso(stamp), None, None, None)
    located = paged.locate_turn(turn)
    if located is not None:
        link.page, link.anchor = located
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

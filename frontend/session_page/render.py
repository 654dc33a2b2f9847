"""The conversation cards of the session page: ``frontend/jinja2/frontend/cards.html`` writes them.

The session page is the one hot path of the UI (a page holds up to ~150 messages, and the
whole page must cost no more than a few times decoding the document), so cards are written by
Jinja2 macros, compiled to Python, rather than nested Django template includes, which cost
~10× more. Transcript text reaches a card either as ``Markup`` from ``frontend.session_page.present``
(Markdown rendered without raw HTML, highlighted code) or as plain values from the document,
which the template escapes. This module holds what the template asks of the cards.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from frontend import format as fmt
from frontend.session_page.conversation import Card, Item, card_kind, message_anchor, permalink_id
from frontend.session_page.markdown import preview_markdown
from frontend.templating import Macros, macros


@dataclass(frozen=True)
class Where:
    """What links in cards need: the session's URL and whose prompts these are."""

    session_url: str  # /p/{project}/s/{id}
    author: str
    results_hidden: bool = False  # the role filter hides tool results: a call without one is not "no result"

    def message_url(self, index: int) -> str:
        return f"{self.session_url}/m/{index}"


@dataclass(frozen=True, slots=True)
class Stamp:
    """A message time as a card's ``<time>`` shows it."""

    iso: str
    title: str
    clock: str


def _stamp(value: Any) -> Stamp | None:
    return Stamp(fmt.iso(value), fmt.stamp(value), fmt.clock(value)) if value else None


def _stamp_of(message: dict[str, Any]) -> Stamp | None:
    return _stamp(message.get("timestamp"))


@dataclass(frozen=True, slots=True)
class Head:
    """What the header of a response card says of its first message, read from the document once
    (a template's every lookup and call costs more than the same in Python; a page has ~100 of them)."""

    stamp: Stamp | None
    uuid: str | None  # permalink_id
    sidechain: bool
    api_error: bool
    agent_id: str
    model: str
    usage: bool  # the message has a usage mapping
    usage_title: str
    tokens: str


def _head(card: Card) -> Head:
    message = card.first
    usage = _last_usage(card)
    model = message.get("model")
    return Head(
        stamp=_stamp(message.get("timestamp")),
        uuid=permalink_id(message),
        sidechain=bool(message.get("sidechain")),
        api_error=bool(message.get("api_error")),
        agent_id=_text(message.get("agent_id")),
        model=_text(model) if model else "",
        usage=isinstance(usage, Mapping),
        usage_title=fmt.usage_title(usage),
        tokens=fmt.tokens(usage),
    )


def _last_usage(card: Card) -> Any:
    """The usage of the card's response as last written (Claude Code 1.0.x grew ``output_tokens`` line by
    line; later versions repeat one figure)."""
    for item in reversed(card.items):
        usage = item.message.get("usage")
        if isinstance(usage, Mapping):
            return usage
    return None


def cards_html(cards: list[Card], where: Where) -> Markup:
    return _macros().cards(cards, where)


def turns_html(turns: list[Any]) -> Markup:  # list[frontend.session_page.reading.TurnLink]
    """The turn navigation's items: a link to the page and card where each turn starts."""
    return _macros().turns(turns)


def _text(value: Any) -> str:
    """A document value as text: transcripts may hold any JSON type where a string is expected."""
    return value if isinstance(value, str) else "" if value is None else str(value)


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _undoubled(cards: list[Card]) -> list[Card]:
    """The cards without the items their Task call already shows (the prompt, the final report)."""
    kept = []
    for card in cards:
        items = [item for item in card.items if not (item.view is not None and item.view.duplicate)]
        if len(items) == len(card.items):
            kept.append(card)
        elif items:
            kept.append(Card(card.kind, items, card.continued))
    return kept


def _any_hit(cards: list[Card]) -> bool:
    return any((item.view is not None and item.view.hit) or _any_hit(item.children) for c in cards for item in c.items)


def _last_stamp(cards: list[Card]) -> object:
    for card in reversed(cards):
        for item in reversed(card.items):
            stamp = (item.result or item.message).get("timestamp")
            if stamp:
                return stamp
    return None


def _first_model(cards: list[Card]) -> str:
    return next((_text(c.first.get("model")) for c in cards if c.first.get("model")), "")


def _compact_detail(message: dict[str, Any]) -> str:
    """`` (auto, 155k tokens before)``: what started a compaction, when the transcript says."""
    compact = found if isinstance(found := message.get("compact"), dict) else {}
    if not compact.get("trigger"):
        return ""
    before = compact.get("preTokens")
    tokens = f", {fmt.short_number(before)} tokens before" if isinstance(before, int) else ""
    return f" ({_text(compact['trigger'])}{tokens})"


def _card_of(kind: str, item: Item) -> Card:
    return Card(kind, [item])


def anchor_of(message: dict[str, Any]) -> Markup:
    """The attributes naming the element that draws ``message``: its permalink id and its index,
    which the page's script orders targets by (the id no longer says it)."""
    return _ANCHOR.format(message_anchor(message), message["index"])


_ANCHOR = Markup(' id="{}" data-i="{}"')


_HELPERS = {
    "permalink_id": permalink_id,
    "anchor_of": anchor_of,
    "text": _text,
    "as_int": _int,
    "undoubled": _undoubled,
    "any_hit": _any_hit,
    "last_stamp": _last_stamp,
    "first_model": _first_model,
    "compact_detail": _compact_detail,
    "card_kind": card_kind,
    "card_of": _card_of,
    "stamp_of": _stamp_of,
    "head_of": _head,
    "preview_md": preview_markdown,
}


def _macros() -> Macros:
    return macros("frontend/cards.html", _HELPERS)

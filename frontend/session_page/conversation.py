"""The session page's reading of a content document: cards, tool pairs, sub-agents, pages.

- The lines of one assistant API response (same ``message_id``) form one card.
- A tool result is attached to its call (found by tool id), so a call reads with its outcome.
- Sub-agent (sidechain) messages sit under the Task call that spawned them (``parent_tool_id``)
  when that call is shown; otherwise they stand on their own, marked as sub-agent work.
- Pages hold whole cards and about ``PAGE_MESSAGES`` messages, so a 2,000-message session is
  never one huge HTML document.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

Message = dict[str, Any]
PAGE_MESSAGES = 100


@dataclass(slots=True)
class Item:
    """One message of a card; a tool call also carries its result and its sub-agent's cards."""

    message: Message
    result: Message | None = None
    children: list[Card] = field(default_factory=list)
    view: Any = None  # filled in by frontend.session_page.present for the cards of the page being shown

    @property
    def child_count(self) -> int:
        return sum(card.message_count for card in self.children)

    def indexes(self) -> Iterator[int]:
        yield self.message["index"]
        if self.result is not None:
            yield self.result["index"]
        for card in self.children:
            yield from card.indexes()


@dataclass(slots=True)
class Card:
    kind: str  # prompt | response | user | meta | tool | compact | summary | system | agent
    items: list[Item]
    continued: bool = False  # a response right after another: drawn as one block with it

    @property
    def first(self) -> Message:
        return self.items[0].message

    @property
    def anchor(self) -> str:
        return message_anchor(self.first)

    @property
    def message_count(self) -> int:
        return sum(1 for _ in self.indexes())

    def indexes(self) -> Iterator[int]:
        for item in self.items:
            yield from item.indexes()


def card_kind(message: Message) -> str:
    role, kind = message["role"], message["kind"]
    if role == "assistant":
        return "response"
    if role == "tool":
        return "tool"
    if role == "user":
        return {"prompt": "prompt", "text": "user"}.get(kind, "meta")
    if message.get("subtype") == "compact_boundary":
        return "compact"
    return "summary" if kind == "summary" else "system"


def with_tool_partners(
    messages: list[Message], shown: list[Message], *, allowed: Callable[[Message], bool] | None = None
) -> list[Message]:
    """``shown`` plus the other half of every tool call or result in it, in document order.

    The time window and Find keep a call and its result together: a hit in a Read's output comes
    with the call that names the file, and a call inside the window keeps its result even when it
    arrived a second after the window closed. ``allowed`` (the role filter) still hides a half
    the reader switched off. Linear in the document.
    """
    if len(shown) == len(messages):
        return shown
    partners: dict[str, list[int]] = defaultdict(list)
    for position, message in enumerate(messages):
        if message["kind"] in ("tool_use", "tool_result"):
            tool_id = (message.get("tool") or {}).get("id")
            if isinstance(tool_id, str) and tool_id:
                partners[tool_id].append(position)
    positions = {id(message): position for position, message in enumerate(messages)}
    keep: set[int] = set()
    for message in shown:
        keep.add(positions[id(message)])
        if message["kind"] in ("tool_use", "tool_result"):
            tool_id = (message.get("tool") or {}).get("id")
            if isinstance(tool_id, str) and tool_id:
                keep.update(p for p in partners[tool_id][:2] if allowed is None or allowed(messages[p]))
    return [messages[position] for position in sorted(keep)]


def build_cards(messages: list[Message]) -> list[Card]:
    """Group filtered messages into cards (see the module docstring)."""
    calls = {m["tool"]["id"] for m in messages if m["kind"] == "tool_use" and (m.get("tool") or {}).get("id")}
    top: list[Message] = []
    children: dict[str, list[Message]] = defaultdict(list)
    loose: dict[str, list[Message]] = {}  # sub-agent work whose spawning call is not shown, per agent
    for message in messages:
        parent = message.get("parent_tool_id")
        if isinstance(parent, str) and parent in calls:
            children[parent].append(message)
        elif message.get("sidechain"):
            loose.setdefault(_agent_key(message), []).append(message)
        else:
            top.append(message)
    grouper = _Grouper(children)
    cards = grouper.group(top)
    if not loose:
        return cards
    runs = [Card("agent", [Item(run[0], children=grouper.group(run[1:]))]) for run in loose.values()]
    return _merge_by_time(cards, runs)


def _agent_key(message: Message) -> str:
    agent = message.get("agent_id")
    return agent if isinstance(agent, str) else str(message.get("parent_tool_id") or "")


def _merge_by_time(cards: list[Card], runs: list[Card]) -> list[Card]:
    """Sub-agent runs placed where they started among the conversation's cards (the document
    appends an unlinked agent, such as the compaction agent, after everything else)."""
    runs.sort(key=lambda run: _stamp(run) or "\uffff")
    merged: list[Card] = []
    pending = 0
    for card in cards:
        stamp = _stamp(card)
        while stamp and pending < len(runs) and (_stamp(runs[pending]) or "\uffff") < stamp:
            merged.append(runs[pending])
            pending += 1
        merged.append(card)
    merged.extend(runs[pending:])
    for position, card in enumerate(merged):
        card.continued = card.kind == "response" and position > 0 and merged[position - 1].kind == "response"
    return merged


_CANONICAL = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?Z")


def _stamp(card: Card) -> str:
    """The card's first timestamp when canonical UTC text (so text order is time order), else ''."""
    stamp = card.first.get("timestamp")
    return stamp if isinstance(stamp, str) and _CANONICAL.fullmatch(stamp) else ""


class _Grouper:
    def __init__(self, children: dict[str, list[Message]]) -> None:
        self.children = children

    def group(self, messages: list[Message]) -> list[Card]:
        cards: list[Card] = []
        calls: dict[str, Item] = {}
        open_key = None  # the message_id of the response card still open
        for message in messages:
            if message["kind"] == "tool_result" and self._attach_result(message, calls):
                continue
            key = message.get("message_id") or message.get("uuid") if message["role"] == "assistant" else None
            if key is not None and key == open_key:
                cards[-1].items.append(self._item(message, calls))
                continue
            card = Card(card_kind(message), [self._item(message, calls)])
            card.continued = card.kind == "response" and bool(cards) and cards[-1].kind == "response"
            cards.append(card)
            open_key = key
        return cards

    def _attach_result(self, message: Message, calls: dict[str, Item]) -> bool:
        item = calls.get((message.get("tool") or {}).get("id") or "")
        if item is None or item.result is not None:
            return False
        item.result = message
        return True

    def _item(self, message: Message, calls: dict[str, Item]) -> Item:
        item = Item(message)
        if message["kind"] == "tool_use":
            tool_id = (message.get("tool") or {}).get("id")
            if tool_id:
                calls[tool_id] = item
                if tool_id in self.children:
                    item.children = self.group(self.children.pop(tool_id))
        return item


@dataclass
class Paged:
    """The cards cut into pages, and where each shown message landed (for turn links)."""

    pages: list[list[Card]]
    located: dict[int, tuple[int, str]]  # message index -> (page number from 1, card anchor)
    shown: list[int] = field(init=False)  # the located indexes, in order

    def __post_init__(self) -> None:
        self.shown = sorted(self.located)

    @property
    def count(self) -> int:
        return len(self.pages)

    def page(self, number: int) -> list[Card]:
        return self.pages[min(max(number, 1), self.count) - 1]

    def first_shown(self, turn: dict[str, Any]) -> int | None:
        """The index of the first shown message of a turn, or None when all of it is hidden."""
        position = bisect_left(self.shown, turn["first_message"])
        last = turn.get("last_message", turn["first_message"])
        if position < len(self.shown) and self.shown[position] <= last:
            return self.shown[position]
        return None

    def locate_turn(self, turn: dict[str, Any]) -> tuple[int, str] | None:
        """The page and card of the first shown message of a turn, or None when all of it is hidden."""
        shown = self.first_shown(turn)
        return None if shown is None else self.located[shown]


def paginate(cards: list[Card], per_page: int = PAGE_MESSAGES) -> Paged:
    pages: list[list[Card]] = [[]]
    located: dict[int, tuple[int, str]] = {}
    size = 0
    for card in cards:
        indexes: list[int] = []
        _collect_indexes(card.items, indexes)
        if pages[-1] and size + len(indexes) > per_page:
            pages.append([])
            size = 0
        pages[-1].append(card)
        size += len(indexes)
        where = (len(pages), card.anchor)
        for index in indexes:
            located[index] = where
    return Paged(pages, located)


_PERMALINK_ID = re.compile(r"[0-9A-Za-z][0-9A-Za-z-]{7,63}")


def permalink_id(message: dict[str, Any]) -> str | None:
    """The uuid a message's permalink names (``?at={uuid}#m-{uuid}``, found on any page); a uuid of
    another shape gets no permalink."""
    uuid = message.get("uuid")
    return uuid if isinstance(uuid, str) and _PERMALINK_ID.fullmatch(uuid) else None


def message_anchor(message: dict[str, Any]) -> str:
    """The id of the element drawing ``message`` (its card, or its block in another's card): ``m-{uuid}``,
    so a permalink's fragment is the message itself (``:target``, focus, screen readers), or ``m-{index}``
    for a message with no uuid."""
    uuid = permalink_id(message)
    return f"m-{uuid}" if uuid else f"m-{message['index']}"


def anchors_of(cards: list[Card], index: int) -> list[str]:
    """The ids of the elements around message ``index`` on a page of ``cards``, outermost first.

    The last is the message's own (a card, a later block of a response, a tool result); the
    ones before are the blocks holding it. The page's script shows the innermost that exists. A
    sub-agent's prompt and final report are drawn by its Task call (``frontend.session_page.present`` marks
    them ``duplicate``), so their block is the call's prompt section or report. Call it on cards
    ``present`` has seen.
    """
    for card in cards:
        found = _anchors_in(card.items, card.anchor, index)
        if found is not None:
            return list(dict.fromkeys(found))
    return []


def _anchors_in(items: list[Item], card_anchor: str, index: int) -> list[str] | None:
    for position, item in enumerate(items):
        own = card_anchor if position == 0 else message_anchor(item.message)
        if item.message["index"] == index:
            return [card_anchor, own]
        if item.result is not None and item.result["index"] == index:
            return [card_anchor, own, message_anchor(item.result)]
        for child in item.children:
            inner = _anchors_in(child.items, child.anchor, index)
            if inner is not None:
                drawn = _drawn_by_call(item, index)
                return [card_anchor, own, *([drawn] if drawn else inner)]
    return None


def _drawn_by_call(call: Item, index: int) -> str | None:
    """The id of the block of a Task call showing its sub-agent's message ``index``, if it does."""
    for card in call.children:
        for child in card.items:
            if child.message["index"] != index or not getattr(child.view, "duplicate", False):
                continue
            if child.message["role"] == "user":
                return f"m-{call.message['index']}-prompt"
            return message_anchor(call.result) if call.result is not None else None
    return None


def _collect_indexes(items: list[Item], out: list[int]) -> None:
    """``Card.indexes`` without generators: paging walks every card of a long session."""
    for item in items:
        out.append(item.message["index"])
        if item.result is not None:
            out.append(item.result["index"])
        for child in item.children:
            _collect_indexes(child.items, out)

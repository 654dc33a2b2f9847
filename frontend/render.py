"""HTML of conversation cards, built in Python with the escaping builder (``frontend.html``).

The session page is the one hot path of the UI (a page holds up to ~150 messages, and the
whole page must cost no more than a few times decoding the document), so cards are assembled
here with ``h()`` instead of nested template includes, which cost ~10× more. Transcript text
reaches this module either as ``Markup`` from ``frontend.present`` (Markdown rendered without
raw HTML, highlighted code) or as plain values from the document, which the builder escapes;
there is no other way to put text into a card.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from frontend import format as fmt
from frontend.conversation import Card, Item, card_kind
from frontend.html import Markup, h, join


@dataclass(frozen=True)
class Where:
    """What links in cards need: the session's URL and whose prompts these are."""

    session_url: str  # /p/{project}/s/{id}
    author: str
    results_hidden: bool = False  # the role filter hides tool results: a call without one is not "no result"

    def message_url(self, index: int) -> str:
        return f"{self.session_url}/m/{index}"


_PERMALINK_ID = re.compile(r"[0-9A-Za-z][0-9A-Za-z-]{7,63}")


def permalink(message: dict[str, Any]) -> Markup | None:
    """The ``#`` link of one message: its target (``id="m-{uuid}"``) and a URL that finds it on any
    page (``?at={uuid}``: the server serves the page holding it). A uuid of another shape gets none."""
    uuid = message.get("uuid")
    if not isinstance(uuid, str) or not _PERMALINK_ID.fullmatch(uuid):
        return None
    return h(
        "a", {"class": "plink", "id": f"m-{uuid}", "href": f"?at={uuid}#m-{uuid}", "title": "Link to this message"}, "#"
    )


def cards_html(cards: list[Card], where: Where, *, nested: bool = False) -> Markup:
    return join(card_html(card, where, nested=nested) for card in cards)


def card_html(card: Card, where: Where, *, nested: bool = False) -> Markup:
    if card.kind == "summary" and card.first.get("compact_summary"):
        return _carried(card)
    renderer = CARD_RENDERERS.get(card.kind)
    return _event(card) if renderer is None else renderer(card, where, nested)


def _str(value: Any) -> str:
    """A document value as text: transcripts may hold any JSON type where a string is expected."""
    return value if isinstance(value, str) else "" if value is None else str(value)


def _time(timestamp: object, css: str | None = None) -> Markup | None:
    if not timestamp:
        return None
    return h(
        "time", {"class": css, "datetime": fmt.iso(timestamp), "title": fmt.stamp(timestamp)}, fmt.clock(timestamp)
    )


def _head(icon: str, who: str, *, extra: Any = None, meta: Any = None, link: Any = None) -> Markup:
    return h(
        "header",
        {"class": "card-head"},
        h("span", {"class": "who"}, fmt.icon(icon), h("span", None, who)),
        extra,
        h("span", {"class": "meta"}, meta, link),
    )


def _more_link(hidden: int, index: int, where: Where) -> Markup | None:
    if not hidden:
        return None
    link = h("a", {"href": where.message_url(index)}, f"{hidden:,} more characters — open in the full-width viewer")
    return h("p", {"class": "more"}, link)


def _more(item: Item, where: Where) -> Markup | None:
    return _more_link(item.view.hidden, item.message["index"], where)


def _md(html: Markup) -> Markup:
    return h("div", {"class": "md"}, html)


def _prompt(card: Card, where: Where, nested: bool) -> Markup:
    message = card.first
    turn = _int(message.get("turn")) + 1
    extra = h("a", {"class": "turn-no", "id": f"turn-{turn}", "href": f"#{card.anchor}"}, f"Turn {turn}")
    body = [(_md(item.view.html), _more(item, where)) for item in card.items]
    head = _head(
        "user", where.author or "User", extra=extra, meta=_time(message.get("timestamp")), link=permalink(message)
    )
    return h("article", {"class": "card prompt", "id": card.anchor, "data-turn": turn}, head, body)


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _response(card: Card, where: Where, nested: bool) -> Markup:
    message = card.first
    sidechain = bool(message.get("sidechain"))
    classes = ["card response", card.continued and "cont", sidechain and "sidechain"]
    classes.append(bool(message.get("api_error")) and "is-error")
    extra = None
    if sidechain and not nested:
        extra = h("span", {"class": "badge"}, fmt.icon("subagent"), "sub-agent ", _str(message.get("agent_id")))
    model = h("span", {"class": "model"}, _str(message["model"])) if message.get("model") else None
    meta = (model, _usage(message.get("usage")), _time(message.get("timestamp")))
    head = _head(
        "assistant", "Sub-agent" if sidechain else "Assistant", extra=extra, meta=meta, link=permalink(message)
    )
    body = [_response_item(item, where, own_id=n > 0) for n, item in enumerate(card.items)]
    return h("article", {"class": classes, "id": card.anchor}, head, body)


def _usage(usage: object) -> Markup | None:
    if not isinstance(usage, dict):
        return None
    return h("span", {"class": "usage", "title": fmt.usage_title(usage)}, fmt.tokens(usage))


def _response_item(item: Item, where: Where, *, own_id: bool = False) -> Markup:
    """One block of a response; after the card's first, it carries its own ``m-{index}`` anchor."""
    kind = item.message["kind"]
    anchor = f"m-{item.message['index']}" if own_id else None
    if kind == "thinking":
        summary = h(
            "summary", None, fmt.icon("thinking"), "Thinking ", h("span", {"class": "muted"}, item.view.preview[:90])
        )
        return h("details", {"class": "thinking", "id": anchor, "open": item.view.hit}, summary, _md(item.view.html))
    if kind == "tool_use":
        return _tool(item, where, anchor)
    return join((h("div", {"class": "md", "id": anchor}, item.view.html), _more(item, where)))


def _badge(css: str, *content: Any) -> Markup:
    return h("span", {"class": f"badge {css}".strip()}, *content)


def _tool(item: Item, where: Where, anchor: str | None = None) -> Markup:
    view = item.view
    if view.agent is not None:
        return _agent_call(item, where, anchor)
    classes = ["tool", view.error and "is-error", item.children and "has-agent"]
    badges = [_badge("err", "error") if view.error else None]
    if item.children:
        count = item.child_count
        badges.append(_badge("", fmt.icon("subagent"), f"{count} sub-agent message{'' if count == 1 else 's'}"))
    if item.result is None and not where.results_hidden:
        badges.append(_badge("muted", "no result"))
    sections = [
        h("div", {"class": "tool-section"}, h("div", {"class": "tool-label"}, s.label), s.html) for s in view.sections
    ]
    summary = h(
        "summary",
        None,
        h("span", {"class": "tool-icon"}, fmt.icon(view.icon)),
        h("span", {"class": "tool-name"}, view.tool_name),
        h("code", {"class": "tool-summary"}, view.summary_html),
        badges,
        permalink(item.message) if anchor else None,  # the card's first block: the card head has its link
    )
    body = h("div", {"class": "tool-body"}, sections, _result(item, where), _subagent(item, where))
    return h("details", {"class": classes, "id": anchor, "open": view.hit}, summary, body)


def _result(item: Item, where: Where) -> Markup | None:
    result = item.result
    if result is None:
        return None
    label = h(
        "div",
        {"class": "tool-label"},
        "Error" if item.view.error else "Result",
        h("span", {"class": "result-of"}, item.view.result_label) if item.view.result_label else None,
        _time(result.get("timestamp"), "muted"),
    )
    more = _more_link(item.view.result_hidden, result["index"], where)
    if more is None and item.view.result_viewer:
        viewer = h("a", {"href": where.message_url(result["index"])}, "highlighted in the full-width viewer")
        more = h("p", {"class": "more"}, viewer)
    anchor = f"m-{result['index']}"
    return h("div", {"class": "tool-section result", "id": anchor}, label, item.view.result_html, more)


def _subagent(item: Item, where: Where) -> Markup | None:
    if not item.children:
        return None
    count = item.child_count
    label = h(
        "summary",
        {"class": "tool-label"},
        fmt.icon("subagent"),
        f"Sub-agent conversation · {count} message{'' if count == 1 else 's'}",
    )
    cards = [_undoubled(card) for card in item.children]
    body = cards_html([card for card in cards if card is not None], where, nested=True)
    return h("details", {"class": "subagent", "open": _any_hit(item.children)}, label, body)


def _undoubled(card: Card) -> Card | None:
    """The card without the items its Task call already shows (the prompt, the final report)."""
    items = [item for item in card.items if not (item.view is not None and item.view.duplicate)]
    if len(items) == len(card.items):
        return card
    return Card(card.kind, items, card.continued) if items else None


def _any_hit(cards: list[Card]) -> bool:
    return any((item.view is not None and item.view.hit) or _any_hit(item.children) for c in cards for item in c.items)


def _agent_call(item: Item, where: Where, anchor: str | None = None) -> Markup:
    """A Task/Agent call: a folded block whose header says which agent ran, on what, for how long."""
    view, facts = item.view, item.view.agent
    usage = facts.usage
    facts_line = [
        _badge("agent-type", facts.kind) if facts.kind else None,
        _badge("muted", facts.model) if facts.model else None,
        _badge("muted", f"{fmt.short_number(usage['total_tokens'])} tokens") if "total_tokens" in usage else None,
        _badge("muted", f"{usage['tool_uses']} tool use{'' if usage['tool_uses'] == 1 else 's'}")
        if "tool_uses" in usage
        else None,
        _badge("muted", fmt.duration(usage["duration_ms"])) if "duration_ms" in usage else None,
        _badge("err", "error") if view.error else None,
        _badge("muted", "no result") if item.result is None and not where.results_hidden else None,
    ]
    summary = h(
        "summary",
        None,
        h("span", {"class": "tool-icon"}, fmt.icon(view.icon)),
        h("span", {"class": "tool-name"}, view.tool_name),
        h("code", {"class": "tool-summary"}, facts.description or view.summary_html),
        h("span", {"class": "agent-facts"}, facts_line),
        permalink(item.message) if anchor else None,
    )
    prompt = None
    if facts.prompt:
        prompt_label = h("summary", {"class": "tool-label"}, "Prompt to the sub-agent")
        prompt = h("details", {"class": "tool-section agent-prompt"}, prompt_label, view.sections[-1].html)
    report = None
    if item.result is not None:
        label = h(
            "div",
            {"class": "tool-label"},
            "Error " if view.error else "Report ",
            _time(item.result.get("timestamp"), "muted"),
        )
        more = _more_link(view.result_hidden, item.result["index"], where)
        report = h(
            "div",
            {"class": "tool-section result report", "id": f"m-{item.result['index']}"},
            label,
            view.result_html,
            more,
        )
    body = h("div", {"class": "tool-body"}, prompt, report, _subagent(item, where))
    classes = ["tool agent-call", view.error and "is-error", item.children and "has-agent"]
    return h("details", {"class": classes, "id": anchor, "open": view.hit or _any_hit(item.children)}, summary, body)


def _tool_only(card: Card, where: Where, nested: bool) -> Markup:
    """A result whose call is not shown (filtered out): the tool's name and the result, folded."""
    item, message = card.items[0], card.first
    view = item.view
    summary = h(
        "summary",
        None,
        h("span", {"class": "tool-icon"}, fmt.icon(view.icon)),
        h("span", {"class": "tool-name"}, view.tool_name),
        h("span", {"class": "tool-summary muted"}, "result"),
        _badge("err", "error") if view.error else None,
        _time(message.get("timestamp"), "meta"),
    )
    body = h("div", {"class": "tool-body"}, view.result_html, _more_link(view.result_hidden, message["index"], where))
    details = h("details", {"class": ["tool", view.error and "is-error"], "open": view.hit}, summary, body)
    return h("article", {"class": "card tool-only", "id": card.anchor}, details)


def _compact(card: Card, where: Where, nested: bool) -> Markup:
    message = card.first
    compact = found if isinstance(found := message.get("compact"), dict) else {}
    detail = ""
    if compact.get("trigger"):
        before = compact.get("preTokens")
        tokens = f", {fmt.short_number(before)} tokens before" if isinstance(before, int) else ""
        detail = f" ({_str(compact['trigger'])}{tokens})"
    inner = h("span", None, fmt.icon("compact"), f"Conversation compacted{detail} · ", _time(message.get("timestamp")))
    return h("div", {"class": "divider", "role": "separator", "id": card.anchor}, inner)


def _carried(card: Card) -> Markup:
    item = card.items[0]
    summary = h(
        "summary",
        None,
        fmt.icon("list"),
        h("span", {"class": "event-label"}, "Summary carried over"),
        h("span", {"class": "event-text"}, item.view.preview),
    )
    return h("details", {"class": "event carried", "id": card.anchor}, summary, _md(item.view.html))


def _user(card: Card, where: Where, nested: bool) -> Markup:
    item, message = card.items[0], card.first
    sidechain = bool(message.get("sidechain"))
    who = "Queued message" if message.get("queued") else ("Prompt to sub-agent" if sidechain else "User")
    head = _head("user", who, meta=_time(message.get("timestamp")), link=permalink(message))
    classes = ["card user-text", sidechain and "sidechain"]
    return h("article", {"class": classes, "id": card.anchor}, head, _md(item.view.html), _more(item, where))


def _agent_run(card: Card, where: Where, nested: bool) -> Markup:
    """Sub-agent work standing on its own (its spawning call is not shown, or it had none, like the
    compaction agent): one folded block at the time it ran, its prompt and conversation inside."""
    item, message = card.items[0], card.first
    agent = _str(message.get("agent_id"))
    name = "Compaction agent" if agent.startswith("acompact") else "Sub-agent"
    last = _last_stamp(item.children) or message.get("timestamp")
    count = card.message_count
    model = next((_str(c.first.get("model")) for c in item.children if c.first.get("model")), "")
    summary = h(
        "summary",
        None,
        h("span", {"class": "tool-icon"}, fmt.icon("subagent")),
        h("span", {"class": "tool-name"}, name),
        h("code", {"class": "tool-summary"}, agent),
        h(
            "span",
            {"class": "agent-facts"},
            _badge("muted", model) if model else None,
            _badge("muted", f"{count} message{'' if count == 1 else 's'}"),
            _time(message.get("timestamp"), "meta"),
            "–" if last != message.get("timestamp") else None,
            _time(last, "meta") if last != message.get("timestamp") else None,
        ),
    )
    if card_kind(message) in ("prompt", "user", "response"):
        label = h("div", {"class": "tool-label"}, "Prompt to the sub-agent", permalink(message))
        first = h("div", {"class": "tool-section"}, label, _md(item.view.html))
    else:  # an injected reminder, a note: folded like everywhere else
        first = _event(Card(card_kind(message), [item]), anchored=False)
    body = h("div", {"class": "tool-body subagent"}, first, cards_html(item.children, where, nested=True))
    details = h(
        "details", {"class": "tool agent-call", "open": item.view.hit or _any_hit(item.children)}, summary, body
    )
    return h("article", {"class": "card agent-run", "id": card.anchor}, details)


def _last_stamp(cards: list[Card]) -> object:
    for card in reversed(cards):
        for item in reversed(card.items):
            stamp = (item.result or item.message).get("timestamp")
            if stamp:
                return stamp
    return None


CARD_RENDERERS: dict[str, Callable[[Card, Where, bool], Markup]] = {
    "agent": _agent_run,
    "prompt": _prompt,
    "response": _response,
    "tool": _tool_only,
    "compact": _compact,
    "user": _user,
}


def _event(card: Card, *, anchored: bool = True) -> Markup:
    """Machine-written lines (hook output, caveats, API errors…): one quiet line, folded when long."""
    item, message = card.items[0], card.first
    classes = ["event", card.kind, message.get("level") == "error" and "is-error"]
    anchor = card.anchor if anchored else None
    label = "Title" if card.kind == "summary" else item.view.label
    head = (fmt.icon("system"), h("span", {"class": "event-label"}, label))
    stamp = _time(message.get("timestamp"))
    if item.view.long:
        summary = h("summary", None, head, h("span", {"class": "event-text"}, item.view.preview), stamp)
        body = h("pre", {"class": "plain"}, item.view.html)
        return h("details", {"class": classes, "id": anchor, "open": item.view.hit}, summary, body)
    return h("div", {"class": classes, "id": anchor}, head, h("span", {"class": "event-text"}, item.view.html), stamp)


def turns_html(turns: list) -> Markup:  # list[frontend.reading.TurnLink]
    """The turn navigation's items: a link to the page and card where each turn starts."""
    return join(_turn_item(turn) for turn in turns)


def _turn_item(turn: Any) -> Markup:
    inner = (h("span", {"class": "turn-n"}, turn.number), h("span", {"class": "turn-p"}, turn.prompt))
    if turn.href is None:
        return h("li", None, h("span", {"class": "turn-off", "title": "Hidden by the filters"}, inner))
    stamp = h("time", {"class": "turn-t", "datetime": turn.iso}, turn.clock)
    link = h("a", {"href": turn.href, "data-page": turn.page, "data-anchor": turn.anchor}, inner, stamp)
    return h("li", None, link)

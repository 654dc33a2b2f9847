"""HTML of conversation cards, built in Python.

The session page is the one hot path of the UI (a page holds up to ~150 messages, and the
whole page must cost no more than a few times decoding the document), so cards are assembled
here with f-strings instead of nested template includes, which cost ~10× more. Every piece of
transcript text reaching this module is already safe HTML from ``frontend.present`` (Markdown
rendered without raw HTML, or escaped); everything else is escaped here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from html import escape

from frontend import format as fmt
from frontend.conversation import Card, Item


@dataclass(frozen=True)
class Where:
    """What links in cards need: the session's URL and whose prompts these are."""

    session_url: str  # /p/{project}/s/{id}
    author: str

    def message_url(self, index: int) -> str:
        return f"{self.session_url}/m/{index}"


def cards_html(cards: list[Card], where: Where, *, nested: bool = False) -> str:
    return "".join(card_html(card, where, nested=nested) for card in cards)


def card_html(card: Card, where: Where, *, nested: bool = False) -> str:
    if card.kind == "summary" and card.first.get("compact_summary"):
        return _carried(card)
    renderer = CARD_RENDERERS.get(card.kind)
    return _event(card) if renderer is None else renderer(card, where, nested)


def _e(value: object) -> str:
    return escape(str(value or ""))


def _time(timestamp: object, css: str = "") -> str:
    if not timestamp:
        return ""
    klass = f' class="{css}"' if css else ""
    return f'<time{klass} datetime="{fmt.iso(timestamp)}" title="{fmt.stamp(timestamp)}">{fmt.clock(timestamp)}</time>'


def _head(icon: str, who: str, *, extra: str = "", meta: str = "") -> str:
    return (
        f'<header class="card-head"><span class="who">{fmt.icon(icon)}<span>{_e(who)}</span></span>{extra}'
        f'<span class="meta">{meta}</span></header>'
    )


def _more(item: Item, where: Where) -> str:
    hidden = item.view.hidden
    if not hidden:
        return ""
    return (
        f'<p class="more"><a href="{where.message_url(item.message["index"])}">{hidden:,} more characters'
        " — open in full</a></p>"
    )


def _prompt(card: Card, where: Where, nested: bool) -> str:
    message = card.first
    turn = (message.get("turn") or 0) + 1
    extra = f'<a class="turn-no" id="turn-{turn}" href="#{card.anchor}">Turn {turn}</a>'
    body = "".join(f'<div class="md">{item.view.html}</div>{_more(item, where)}' for item in card.items)
    return (
        f'<article class="card prompt" id="{card.anchor}" data-turn="{turn}">'
        f"{_head('user', where.author or 'User', extra=extra, meta=_time(message.get('timestamp')))}"
        f"{body}</article>"
    )


def _response(card: Card, where: Where, nested: bool) -> str:
    message = card.first
    classes = "card response" + (" cont" if card.continued else "") + (" sidechain" if message.get("sidechain") else "")
    classes += " is-error" if message.get("api_error") else ""
    extra = ""
    if message.get("sidechain") and not nested:
        extra = f'<span class="badge">{fmt.icon("subagent")}sub-agent {_e(message.get("agent_id"))}</span>'
    meta = f'<span class="model">{_e(message.get("model"))}</span>' if message.get("model") else ""
    meta += _usage(message.get("usage")) + _time(message.get("timestamp"))
    who = "Sub-agent" if message.get("sidechain") else "Assistant"
    body = "".join(_response_item(item, where) for item in card.items)
    head = _head("assistant", who, extra=extra, meta=meta)
    return f'<article class="{classes}" id="{card.anchor}">{head}{body}</article>'


def _usage(usage: object) -> str:
    if not isinstance(usage, dict):
        return ""
    return f'<span class="usage" title="{_e(fmt.usage_title(usage))}">{fmt.tokens(usage)}</span>'


def _response_item(item: Item, where: Where) -> str:
    kind = item.message["kind"]
    if kind == "thinking":
        return (
            f'<details class="thinking"><summary>{fmt.icon("thinking")}Thinking '
            f'<span class="muted">{_e(item.view.preview[:90])}</span></summary>'
            f'<div class="md">{item.view.html}</div></details>'
        )
    if kind == "tool_use":
        return _tool(item, where)
    return f'<div class="md">{item.view.html}</div>{_more(item, where)}'


def _tool(item: Item, where: Where) -> str:
    view = item.view
    classes = "tool" + (" is-error" if view.error else "") + (" has-agent" if item.children else "")
    badges = '<span class="badge err">error</span>' if view.error else ""
    if item.children:
        count = item.child_count
        badges += (
            f'<span class="badge">{fmt.icon("subagent")}{count} sub-agent message{"" if count == 1 else "s"}</span>'
        )
    if item.result is None:
        badges += '<span class="badge muted">no result</span>'
    sections = "".join(
        f'<div class="tool-section"><div class="tool-label">{_e(s.label)}</div>{s.html}</div>' for s in view.sections
    )
    return (
        f'<details class="{classes}"><summary><span class="tool-icon">{fmt.icon(view.icon)}</span>'
        f'<span class="tool-name">{_e(view.tool_name)}</span><code class="tool-summary">{view.summary_html}</code>'
        f'{badges}</summary><div class="tool-body">{sections}{_result(item, where)}{_subagent(item, where)}'
        "</div></details>"
    )


def _result(item: Item, where: Where) -> str:
    result = item.result
    if result is None:
        return ""
    label = "Error" if item.view.error else "Result"
    return (
        f'<div class="tool-section result"><div class="tool-label">{label} '
        f"{_time(result.get('timestamp'), 'muted')}</div>{item.view.result_html}"
        f"{_result_more(item.view.result_hidden, result['index'], where)}</div>"
    )


def _result_more(hidden: int, index: int, where: Where) -> str:
    if not hidden:
        return ""
    return f'<p class="more"><a href="{where.message_url(index)}">{hidden:,} more characters — open in full</a></p>'


def _subagent(item: Item, where: Where) -> str:
    if not item.children:
        return ""
    return (
        f'<div class="subagent"><div class="tool-label">{fmt.icon("subagent")}Sub-agent conversation</div>'
        f"{cards_html(item.children, where, nested=True)}</div>"
    )


def _tool_only(card: Card, where: Where, nested: bool) -> str:
    """A result whose call is not shown (filtered out): the tool's name and the result, folded."""
    item, message = card.items[0], card.first
    view = item.view
    error = " is-error" if view.error else ""
    badge = '<span class="badge err">error</span>' if view.error else ""
    summary = (
        f'<summary><span class="tool-icon">{fmt.icon(view.icon)}</span><span class="tool-name">{_e(view.tool_name)}'
        f'</span><span class="tool-summary muted">result</span>{badge}{_time(message.get("timestamp"), "meta")}'
        "</summary>"
    )
    body = f"{view.result_html}{_result_more(view.result_hidden, message['index'], where)}"
    return (
        f'<article class="card tool-only" id="{card.anchor}"><details class="tool{error}">{summary}'
        f'<div class="tool-body">{body}</div></details></article>'
    )


def _compact(card: Card, where: Where, nested: bool) -> str:
    message = card.first
    compact = message.get("compact") if isinstance(message.get("compact"), dict) else {}
    detail = ""
    if compact.get("trigger"):
        before = compact.get("preTokens")
        tokens = f", {fmt.short_number(before)} tokens before" if isinstance(before, int) else ""
        detail = f" ({_e(compact['trigger'])}{tokens})"
    return (
        f'<div class="divider" role="separator" id="{card.anchor}"><span>{fmt.icon("compact")}'
        f"Conversation compacted{detail} · {_time(message.get('timestamp'))}</span></div>"
    )


def _carried(card: Card) -> str:
    item = card.items[0]
    return (
        f'<details class="event carried" id="{card.anchor}"><summary>{fmt.icon("list")}'
        f'<span class="event-label">Summary carried over</span><span class="event-text">{_e(item.view.preview)}'
        f'</span></summary><div class="md">{item.view.html}</div></details>'
    )


def _user(card: Card, where: Where, nested: bool) -> str:
    item, message = card.items[0], card.first
    who = "Queued message" if message.get("queued") else ("Prompt to sub-agent" if message.get("sidechain") else "User")
    classes = "card user-text" + (" sidechain" if message.get("sidechain") else "")
    return (
        f'<article class="{classes}" id="{card.anchor}">{_head("user", who, meta=_time(message.get("timestamp")))}'
        f'<div class="md">{item.view.html}</div>{_more(item, where)}</article>'
    )


CARD_RENDERERS: dict[str, Callable[[Card, Where, bool], str]] = {
    "prompt": _prompt,
    "response": _response,
    "tool": _tool_only,
    "compact": _compact,
    "user": _user,
}


def _event(card: Card) -> str:
    """Machine-written lines (hook output, caveats, API errors…): one quiet line, folded when long."""
    item, message = card.items[0], card.first
    classes = f"event {card.kind}" + (" is-error" if message.get("level") == "error" else "")
    label = "Title" if card.kind == "summary" else item.view.label
    head = f'{fmt.icon("system")}<span class="event-label">{_e(label)}</span>'
    if item.view.long:
        return (
            f'<details class="{classes}" id="{card.anchor}"><summary>{head}<span class="event-text">'
            f"{_e(item.view.preview)}</span>{_time(message.get('timestamp'))}</summary>"
            f'<pre class="plain">{item.view.html}</pre></details>'
        )
    return (
        f'<div class="{classes}" id="{card.anchor}">{head}<span class="event-text">{item.view.html}</span>'
        f"{_time(message.get('timestamp'))}</div>"
    )


def turns_html(turns: list) -> str:  # list[frontend.reading.TurnLink]
    """The turn navigation's items: a link to the page and card where each turn starts."""
    out = []
    for turn in turns:
        inner = f'<span class="turn-n">{turn.number}</span><span class="turn-p">{_e(turn.prompt)}</span>'
        if turn.href is None:
            out.append(f'<li><span class="turn-off" title="Hidden by the filters">{inner}</span></li>')
        else:
            out.append(
                f'<li><a href="{_e(turn.href)}" data-page="{turn.page}" data-anchor="{turn.anchor}">{inner}'
                f'<time class="turn-t" datetime="{turn.iso}">{turn.clock}</time></a></li>'
            )
    return "".join(out)

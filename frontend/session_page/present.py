"""Safe HTML for the cards of one page (Markdown, tool layouts, search marks), computed once.

Every ``*html`` field is ``Markup`` from a template or the Markdown renderer; the rest is
plain text that the cards template escapes. The Markdown and highlighting of one page share
one cost budget (``frontend.session_page.markdown.render_budget``), so a page of hostile texts stays cheap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from frontend.session_page import tools
from frontend.session_page.conversation import Card, Item
from frontend.session_page.markdown import mark_matches, plain_block, render_budget, render_markdown, render_plain
from sessionledger.core.formats import injected_context

TEXT_LIMIT = 30_000  # characters of a prompt or reply shown inline; the rest via the message page
MARKDOWN_KINDS = frozenset({"prompt", "text", "thinking"})
PREVIEW_LIMIT = 140
EVENT_LABELS = {
    "caveat": "Caveat",
    "command_output": "Command output",
    "bash_output": "Shell output",
    "interrupt": "Interrupted",
    "task_notification": "Notification",
    "hook_feedback": "Hook feedback",
    "hook_context": "Hook context",
    "meta": "Injected context",
    "api_error": "API error",
    "informational": "Note",
    "stop_hook_summary": "Stop hook",
    "local_command": "Command",
}


EMPTY = Markup("")


@dataclass
class ItemView:
    html: Markup = EMPTY
    hidden: int = 0  # characters left out of the inline view
    tool_name: str = ""
    icon: str = "tool"
    summary_html: Markup = EMPTY
    sections: list[tools.Section] = field(default_factory=list)
    result_html: Markup = EMPTY
    result_hidden: int = 0
    result_label: str = ""  # what the result is of: a file (and its lines), a command
    result_viewer: bool = False  # a long Read output: highlighted in the full-width viewer only
    error: bool = False
    label: str = ""
    preview: str = ""  # first line, for events shown on one line
    long: bool = False  # more than the preview: shown collapsible
    hit: bool = False  # Find matched here: a folded block is drawn open
    agent: AgentFacts | None = None  # a Task/Agent call: what its header says about the sub-agent
    duplicate: bool = False  # says what its Task call's header or report already says: not drawn again


@dataclass
class AgentFacts:
    kind: str  # subagent_type
    description: str
    model: str
    usage: dict[str, int]  # total_tokens, tool_uses, duration_ms (from the `<usage>` trailer)
    prompt: str
    report: str


def present(cards: list[Card], needle: str = "") -> None:
    """Fill in ``item.view`` for the cards of one page, within one page's rendering budget."""
    with render_budget():
        _present(cards, needle, [tools.INLINE_HIGHLIGHT_PAGE])


def _present(cards: list[Card], needle: str, lexing: list[int]) -> None:
    """``lexing``: characters of Read output this page may still highlight inline (one-item list)."""
    for card in cards:
        for item in card.items:
            tool_use = item.message["kind"] == "tool_use"
            item.view = _tool_view(item, needle, lexing) if tool_use else _view(item, needle)
            if needle:
                item.view.hit = _MARKED in item.view.html or _MARKED in item.view.result_html
                item.view.hit = item.view.hit or _MARKED in item.view.summary_html
            _present(item.children, needle, lexing)
            if item.view.agent is not None:
                _agent_facts_from_children(item)


_MARKED = Markup("<mark>")


def _text(value: Any) -> str:
    """A document value that should be text; anything else (a hostile or older document) as JSON-ish text."""
    return value if isinstance(value, str) else "" if value is None else str(value)


def _body(content: str, markdown: bool) -> tuple[Markup, int]:
    if len(content) > TEXT_LIMIT:
        return plain_block(content[:TEXT_LIMIT]), len(content) - TEXT_LIMIT
    return (render_markdown(content) if markdown else render_plain(content)), 0


def full_message_html(message: dict[str, Any], call: dict[str, Any] | None = None) -> Markup:
    """One message in full (the full-width viewer): Markdown for prose; a tool output with line
    numbers (a Read's real ones) and highlighting by the file's name, within a page's budget."""
    content = _text(message.get("content"))
    with render_budget():
        if message.get("kind") in MARKDOWN_KINDS:
            return render_markdown(content)
        if message.get("kind") != "tool_result":
            return plain_block(content)
        tool = (call or {}).get("tool") or {}
        data = found if isinstance(found := tool.get("input"), dict) else {}
        filename = _text(data.get("file_path"))
        numbered = tools.numbered_lines(content) if tool.get("name") == "Read" else None
        if numbered is not None:
            return tools.code_view(numbered.code, numbers=numbered.numbers, filename=filename, rest=numbered.rest)
        return tools.code_view(content)


def viewer_title(message: dict[str, Any], call: dict[str, Any] | None) -> str:
    """What the viewer shows, in words: ``Read result · retry.py · lines 1–900``, ``Bash result · pytest -q``."""
    if message.get("kind") != "tool_result" or call is None:
        return ""
    tool = call.get("tool") or {}
    name = _text(tool.get("name")) or "Tool"
    label = tools.result_label(tool.get("name"), tool.get("input"), _text(message.get("content")), limit=None)
    return f"{name} result · {label}" if label else f"{name} result"


def _view(item: Item, needle: str) -> ItemView:
    message = item.message
    if message["kind"] == "tool_result":
        return _result_only(item, needle)
    content = _text(message.get("content"))
    html, hidden = _body(content, message["kind"] in MARKDOWN_KINDS or bool(message.get("compact_summary")))
    first = next((line.strip() for line in content.splitlines() if line.strip()), "")
    preview = first if len(first) <= PREVIEW_LIMIT else first[: PREVIEW_LIMIT - 1] + "…"
    subtype = _text(message.get("subtype"))
    reminder = next((p for p in INJECTED if content.startswith(p)), "")  # the agent's own context: folded
    return ItemView(
        html=mark_matches(html, needle),
        hidden=hidden,
        preview=_reminder_preview(content, reminder) if reminder else preview,
        long=bool(reminder) or preview != content.strip(),
        label="System reminder"
        if reminder
        else EVENT_LABELS.get(subtype, subtype.replace("_", " ").capitalize() or "Note"),
    )


INJECTED = injected_context()


def _reminder_preview(content: str, prefix: str) -> str:
    """The first line of injected context's text (its opening tag left out)."""
    lines = content[len(prefix) : len(prefix) + 2000].splitlines()
    first = next((line.strip() for line in lines if line.strip()), "")
    return (first if len(first) <= PREVIEW_LIMIT else first[: PREVIEW_LIMIT - 1] + "…") or "…"


def _result_only(item: Item, needle: str) -> ItemView:
    tool = item.message.get("tool") or {}
    html, hidden = tools.result_html(_text(item.message.get("content")), name=tool.get("name"))
    return ItemView(
        tool_name=_text(tool.get("name")) or "Tool result",
        icon=tools.icon_for(tool.get("name")),
        result_html=mark_matches(html, needle),
        result_hidden=hidden,
        error=bool(tool.get("is_error")),
    )


def _agent_facts_from_children(item: Item) -> None:
    """The sub-agent's model, and its prompt and final answer marked as already shown by the call."""
    facts = item.view.agent
    messages = [child.message for card in item.children for child in card.items]
    if not facts.model:
        facts.model = next((_text(m.get("model")) for m in messages if m.get("model")), "")
    first = next(
        (
            c
            for card in item.children
            for c in card.items
            if c.message["role"] == "user" and c.message["kind"] != "meta"
        ),
        None,
    )
    if first is not None and _same(first.message.get("content"), facts.prompt):
        first.view.duplicate = True
    last = next(
        (c for card in reversed(item.children) for c in reversed(card.items) if c.message["kind"] == "text"), None
    )
    if last is not None and last.message["role"] == "assistant" and _same(last.message.get("content"), facts.report):
        last.view.duplicate = True


def _same(content: Any, text: str) -> bool:
    return bool(text) and _text(content).strip() == text.strip()


def _agent_facts(item: Item) -> AgentFacts:
    tool = item.message.get("tool") or {}
    data = found if isinstance(found := tool.get("input"), dict) else {}
    report = tools.agent_report(_text(item.result.get("content"))) if item.result is not None else None
    return AgentFacts(
        kind=_text(data.get("subagent_type")),
        description=_text(data.get("description")),
        model=_text(data.get("model")),
        usage=report.usage if report else {},
        prompt=_text(data.get("prompt")),
        report=report.text if report else "",
    )


def _tool_view(item: Item, needle: str, lexing: list[int]) -> ItemView:
    message, result = item.message, item.result
    tool = message.get("tool") or {}
    view = ItemView(
        tool_name=_text(tool.get("name")) or "tool",
        icon=tools.icon_for(tool.get("name")),
        summary_html=mark_matches(
            render_plain(tools.call_summary(tool.get("name"), tool.get("input"), _text(message.get("content")))), needle
        ),
        # a match in the input is marked too: a plan's summary no longer carries its steps' text
        sections=[
            tools.Section(section.label, mark_matches(section.html, needle))
            for section in tools.input_sections(tool.get("name"), tool.get("input"))
        ],
    )
    if result is not None:
        content, name, data = _text(result.get("content")), tool.get("name"), tool.get("input")
        filename = _text(data.get("file_path")) if isinstance(data, dict) else ""
        lexed = name == "Read" and len(content) <= min(tools.INLINE_HIGHLIGHT, lexing[0])
        if lexed:
            lexing[0] -= len(content)
        html, view.result_hidden = tools.result_html(content, name=name, filename=filename if lexed else "")
        view.result_label = tools.result_label(name, data, content)
        view.result_viewer = name == "Read" and not lexed
        view.result_html = mark_matches(html, needle)
        view.error = bool((result.get("tool") or {}).get("is_error"))
    if tool.get("name") in ("Task", "Agent"):
        view.agent = _agent_facts(item)
    return view

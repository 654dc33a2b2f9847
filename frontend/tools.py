"""How a tool call reads: an icon, a one-line summary, its input laid out per tool, its result.

Inputs are shown the way a reviewer wants them (a Bash command highlighted, an Edit as a diff,
a Write as highlighted file content); an unknown tool falls back to its JSON input.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from html import escape
from typing import Any

from frontend.markdown import highlight_code, render_markdown, render_plain

RESULT_LIMIT = 20_000  # characters of a tool result shown inline; the rest via the message page
INPUT_LIMIT = 40_000
SUMMARY_LIMIT = 160

ICONS = {
    "Bash": "terminal",
    "BashOutput": "terminal",
    "KillShell": "terminal",
    "Read": "file",
    "Write": "file",
    "Edit": "edit",
    "MultiEdit": "edit",
    "NotebookEdit": "edit",
    "Grep": "search",
    "Glob": "search",
    "WebFetch": "globe",
    "WebSearch": "globe",
    "Task": "agent",
    "Agent": "agent",
    "TodoWrite": "list",
}


@dataclass
class Section:
    label: str
    html: str


def icon_for(name: str | None) -> str:
    if name and name.startswith("mcp__"):
        return "plug"
    return ICONS.get(name or "", "tool")


def summary_line(text: str) -> str:
    """The first non-empty line of a call's summary, shortened."""
    line = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
    return line if len(line) <= SUMMARY_LIMIT else line[: SUMMARY_LIMIT - 1] + "…"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _code(code: str, *, language: str = "", filename: str = "") -> str:
    clipped = code[:INPUT_LIMIT]
    more = f"\n… {len(code) - INPUT_LIMIT:,} more characters" if len(code) > INPUT_LIMIT else ""
    return f'<pre class="hl">{highlight_code(clipped, language=language, filename=filename)}{more}</pre>'


def _diff(old: str, new: str) -> str:
    """A unified diff, coloured with Pygments' diff classes but without running a lexer (it is hot)."""
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=3))[2:]
    body = "\n".join(
        f'<span class="{_DIFF_CLASSES.get(line[:1], "")}">{escape(line, quote=False)}</span>'
        for line in lines[: INPUT_LIMIT // 40]
    )
    return f'<pre class="hl diff">{body or "(no change)"}</pre>'


_DIFF_CLASSES = {"+": "gi", "-": "gd", "@": "gu"}


def _bash(data: dict[str, Any]) -> list[Section]:
    command = _text(data.get("command"))
    sections = [Section("Command", f'<pre class="plain">{render_plain(command[:INPUT_LIMIT])}</pre>')]
    if _text(data.get("description")):
        sections.insert(0, Section("Why", render_plain(data["description"])))
    return sections


def _edit(data: dict[str, Any]) -> list[Section]:
    edits = data.get("edits") if isinstance(data.get("edits"), list) else [data]
    return [
        Section(
            "Change" if len(edits) == 1 else f"Change {n}",
            _diff(_text(e.get("old_string")), _text(e.get("new_string"))),
        )
        for n, e in enumerate(edits, 1)
        if isinstance(e, dict)
    ]


def _write(data: dict[str, Any]) -> list[Section]:
    return [Section("Content", _code(_text(data.get("content")), filename=_text(data.get("file_path"))))]


def _task(data: dict[str, Any]) -> list[Section]:
    sections = [Section("Prompt", f'<div class="md">{render_markdown(_text(data.get("prompt")))}</div>')]
    if _text(data.get("subagent_type")):
        sections.insert(0, Section("Agent", render_plain(data["subagent_type"])))
    return sections


_TODO_MARKS = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}


def _todos(data: dict[str, Any]) -> list[Section]:
    todos = [t for t in data.get("todos") or [] if isinstance(t, dict)]
    rows = "".join(
        f'<li class="todo-{render_plain(_text(t.get("status")))}">'
        f"{_TODO_MARKS.get(_text(t.get('status')), '[ ]')} {render_plain(_text(t.get('content')))}</li>"
        for t in todos
    )
    return [Section("Todos", f'<ul class="todos">{rows}</ul>')]


def _just_summary(data: dict[str, Any]) -> list[Section]:
    return []


def _json(data: Any) -> list[Section]:
    text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    return [Section("Input", _code(text, language="json"))]


LAYOUTS: dict[str, Callable[[dict[str, Any]], list[Section]]] = {
    "Bash": _bash,
    "Edit": _edit,
    "MultiEdit": _edit,
    "Write": _write,
    "Task": _task,
    "Agent": _task,
    "TodoWrite": _todos,
    "Read": _just_summary,
    "Glob": _just_summary,
    "WebSearch": _just_summary,
}


def input_sections(name: str | None, tool_input: Any) -> list[Section]:
    layout = LAYOUTS.get(name or "")
    if layout is None or not isinstance(tool_input, dict):
        return _json(tool_input) if tool_input not in (None, {}, "") else []
    try:
        return layout(tool_input)
    except (TypeError, ValueError, AttributeError):
        return _json(tool_input)


_AGENT_TRAILER = re.compile(r"\s*agentId: [\w-]+ \(for resuming[^)\n]*\)\s*$")


def result_html(content: str, *, name: str | None) -> tuple[str, int]:
    """The result's HTML and how many characters were left out."""
    shown, hidden = content[:RESULT_LIMIT], max(0, len(content) - RESULT_LIMIT)
    if name in ("Task", "Agent"):  # the sub-agent's answer is prose; its resume trailer is noise here
        return f'<div class="md">{render_markdown(_AGENT_TRAILER.sub("", shown))}</div>', hidden
    return f'<pre class="plain">{render_plain(shown) or "(no output)"}</pre>', hidden

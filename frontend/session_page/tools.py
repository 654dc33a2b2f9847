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
from typing import Any

from markupsafe import Markup, escape

from frontend.session_page.markdown import afford, highlight_code, render_markdown
from frontend.templating import Macros, macros
from sessionledger.core.formats.subagents import split_usage_trailer

RESULT_LIMIT = 20_000  # characters of a tool result shown inline; the rest via the message page
# Highlighting costs ~8 ms and multiplies the bytes by ~5 per 1,000 characters (Pygments): a page highlights
# short Read outputs inline up to a budget; the others are numbered but plain, and highlighted in
# the full-width viewer (linked).
INLINE_HIGHLIGHT, INLINE_HIGHLIGHT_PAGE = 3_000, 3_000
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
    html: Markup


def icon_for(name: object) -> str:
    if not isinstance(name, str):
        return "tool"
    return "plug" if name.startswith("mcp__") else ICONS.get(name, "tool")


def summary_line(text: str) -> str:
    """The first non-empty line of a call's summary, shortened."""
    line = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
    return line if len(line) <= SUMMARY_LIMIT else line[: SUMMARY_LIMIT - 1] + "…"


def call_summary(name: object, data: object, content: str) -> str:
    """The call's one-line summary: a plan (TodoWrite, Codex's ``update_plan``) read as its counts
    and current step, since its stored summary is the arguments' JSON; any other, ``summary_line``."""
    steps = _plan_steps(name, data)
    if steps is None:
        return summary_line(content)
    done = sum(1 for status, _ in steps if status == "completed")
    current = next((text for status, text in steps if status == "in_progress"), "")
    line = f"{len(steps)} steps, {done} done" + (f" · now: {current}" if current else "")
    return summary_line(line)


PLAN_KEYS = {"TodoWrite": ("todos", "content"), "update_plan": ("plan", "step")}  # tool -> (list, item text)


def _plan_steps(name: object, data: object) -> list[tuple[str, str]] | None:
    """(status, text) of a plan call's items, or None for another call (or arguments not a plan)."""
    key = PLAN_KEYS.get(name if isinstance(name, str) else "")
    items = data.get(key[0]) if key is not None and isinstance(data, dict) else None
    if key is None or not isinstance(items, list):
        return None
    return [(_text(item.get("status")), _text(item.get(key[1]))) for item in items if isinstance(item, dict)]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _more_characters(text: str, limit: int) -> str:
    return f"\n… {len(text) - limit:,} more characters" if len(text) > limit else ""


def _code(code: str, *, language: str = "", filename: str = "") -> Markup:
    highlighted = highlight_code(code[:INPUT_LIMIT], language=language, filename=filename)
    return _macros().code(highlighted, _more_characters(code, INPUT_LIMIT))


# difflib compares every line with every other in the worst case (~0.1 s for 500 × 500 lines
# that interleave): beyond DIFF_CELLS line pairs, or once the page's render budget is spent
# (a pair costs a tenth of a Markdown character), the two sides are listed one after the other.
DIFF_CELLS = 250_000
DIFF_CELL_COST = 0.1


def _diff(old: str, new: str) -> Markup:
    """A unified diff, coloured with Pygments' diff classes but without running a lexer (it is hot)."""
    old_lines, new_lines = old[:INPUT_LIMIT].splitlines(), new[:INPUT_LIMIT].splitlines()
    cells = len(old_lines) * len(new_lines)
    if cells > DIFF_CELLS or not afford(int(cells * DIFF_CELL_COST)):
        lines = [f"-{line}" for line in old_lines] + [f"+{line}" for line in new_lines]
    else:
        lines = list(difflib.unified_diff(old_lines, new_lines, lineterm="", n=3))[2:]
    return _macros().diff([(_DIFF_CLASSES.get(line[:1], ""), line) for line in lines[: INPUT_LIMIT // 40]])


_DIFF_CLASSES = {"+": "gi", "-": "gd", "@": "gu"}


def _plain(text: str) -> Markup:
    return _macros().plain(text)


def _bash(data: dict[str, Any]) -> list[Section]:
    command = _text(data.get("command"))
    sections = [Section("Command", _plain(command[:INPUT_LIMIT]))]
    if _text(data.get("description")):
        sections.insert(0, Section("Why", escape(data["description"])))
    return sections


def _edit(data: dict[str, Any]) -> list[Section]:
    edits = found if isinstance(found := data.get("edits"), list) else [data]
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
    sections = [Section("Prompt", _markdown(_text(data.get("prompt"))))]
    if _text(data.get("subagent_type")):
        sections.insert(0, Section("Agent", escape(data["subagent_type"])))
    return sections


def _markdown(text: str) -> Markup:
    return _macros().markdown(render_markdown(text))


_TODO_MARKS = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}


def _todos(data: dict[str, Any]) -> list[Section]:
    todos = [t for t in data.get("todos") or [] if isinstance(t, dict)]
    rows = [_todo(_text(t.get("status")), _text(t.get("content"))) for t in todos]
    return [Section("Todos", _macros().todos(rows))]


def _todo(status: str, content: str) -> tuple[str, str]:
    """A known status names the row's class; any other is shown as pending (it is text, not a class)."""
    known = status if status in _TODO_MARKS else "pending"
    return known, f"{_TODO_MARKS[known]} {content}"


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


def input_sections(name: object, tool_input: Any) -> list[Section]:
    layout = LAYOUTS.get(name) if isinstance(name, str) else None
    if layout is None or not isinstance(tool_input, dict):
        return _json(tool_input) if tool_input not in (None, {}, "") else []
    try:
        return layout(tool_input)
    except (TypeError, ValueError, AttributeError):
        return _json(tool_input)


# Matched only at one position (``match`` from the last "agentId: "): linear whatever the text.
# The ``<usage>`` trailer is parsed with the transcript formats (``sessionledger.core.formats.subagents``).
_AGENT_TRAILER = re.compile(r"agentId: [\w-]+ \(for resuming[^)\n]*\)\s*\Z")


def strip_agent_trailer(text: str) -> str:
    """A sub-agent's answer without its ``agentId: … (for resuming …)`` trailer (noise on the page)."""
    at = text.rfind("agentId: ")
    if at < 0 or not _AGENT_TRAILER.match(text, at):
        return text.rstrip()
    return text[:at].rstrip()


@dataclass
class AgentReport:
    """A sub-agent's answer (a Task result) without its trailers, and what the usage trailer said."""

    text: str
    usage: dict[str, int]


def agent_report(text: str) -> AgentReport:
    """Claude Code's ``agentId: … (for resuming …)`` and usage trailers split off a sub-agent's report."""
    text, usage = split_usage_trailer(text)
    return AgentReport(strip_agent_trailer(text), usage)


ARROW = "\u2192"  # Claude Code's Read output: `     5→line five`


@dataclass
class Numbered:
    """A Read output split into its real line numbers, the file's text, and what followed it."""

    numbers: list[str]
    code: str
    rest: str  # text after the numbered lines (Claude Code appends notes and reminders)

    @property
    def first(self) -> int:
        return int(self.numbers[0])

    @property
    def last(self) -> int:
        return int(self.numbers[-1])


def numbered_lines(text: str) -> Numbered | None:
    """The ``     5→`` prefixes of a Read output taken off into line numbers (linear: one
    ``partition`` per line). None unless the output starts with such a line."""
    numbers: list[str] = []
    lines: list[str] = []
    rest = ""
    position = 0
    for line in text.split("\n"):
        left, arrow, right = line.partition(ARROW)
        number = left.strip()
        if not arrow or not number.isdigit() or len(left) > 12:
            rest = text[position:]
            break
        numbers.append(number)
        lines.append(right)
        position += len(line) + 1
    if not numbers:
        return None
    return Numbered(numbers, "\n".join(lines), rest.strip("\n"))


def code_view(code: str, *, numbers: list[str] | None = None, filename: str = "", rest: str = "") -> Markup:
    """Code with a line-number gutter (real numbers where known) and highlighting by file name.

    Two ``<pre>`` side by side (``frontend/jinja2/frontend/tools.html``): copying never copies numbers."""
    numbers = numbers or [str(n) for n in range(1, code.count("\n") + 2)]
    return _macros().code_view("\n".join(numbers), highlight_code(code, filename=filename), rest)


def result_html(content: str, *, name: str | None, filename: str = "") -> tuple[Markup, int]:
    """The result's HTML and how many characters were left out."""
    shown, hidden = content[:RESULT_LIMIT], max(0, len(content) - RESULT_LIMIT)
    if name in ("Task", "Agent"):  # the sub-agent's answer is prose; its trailers are noise here
        return _markdown(agent_report(shown).text), hidden
    if name == "Read":
        numbered = numbered_lines(shown)
        if numbered is not None:
            return code_view(numbered.code, numbers=numbered.numbers, filename=filename, rest=numbered.rest), hidden
    return _plain(shown or "(no output)"), hidden


def result_label(name: object, tool_input: Any, content: str, *, limit: int | None = RESULT_LIMIT) -> str:
    """What a result is of, for its header: the file (and lines) read or written, the command run.
    Lines are counted in the first ``limit`` characters (what the page shows; ``…`` when cut)."""
    data = tool_input if isinstance(tool_input, dict) else {}
    path = _text(data.get("file_path") or data.get("notebook_path") or data.get("path"))
    if name == "Read" and path:
        cut = limit is not None and len(content) > limit
        numbered = numbered_lines(content[:limit] if cut else content)
        lines = f" · lines {numbered.first}–{numbered.last}{'…' if cut else ''}" if numbered else ""
        return f"{path.rsplit('/', 1)[-1]}{lines}"
    if path:
        return path.rsplit("/", 1)[-1]
    command = _text(data.get("command") or data.get("pattern") or data.get("url") or data.get("query"))
    first = command.strip().split("\n", 1)[0]
    return first if len(first) <= 80 else first[:79] + "…"


def _macros() -> Macros:
    return macros("frontend/tools.html")

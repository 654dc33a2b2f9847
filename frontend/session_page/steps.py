"""The steps outline of a session page: each prompt, commit, error and burst of edits, with a minimap.

"Turns" count human prompts only, so a long autonomous session has two of them; steps are the
points a reader navigates by. They are the client's steps (``sessionledger.core.formats.steps``: a
human prompt, a tool call, a commit captured inside a turn) read from the content document and
narrowed to what a reviewer jumps between:

- ``prompt``: a human prompt;
- ``commit``: a Bash call that ran ``git commit`` (a commit made inside the session);
- ``error``: a failed tool result or an API error;
- ``edit``: a run of Edit / Write / MultiEdit / NotebookEdit calls, as one step naming its files;
  reading and searching between them keep the run going, anything else (a test run) ends it.

Prompts, commits and errors come from the main conversation (sub-agent work sits under its call);
edits come from the sub-agents too, each agent's runs its own bursts labelled with the agent (the
spawning call's description), since in a session that delegates the work the sub-agents write
most of the files. Linear in the document; labels are
plain text, escaped by the template (``frontend/jinja2/frontend/steps.html``) like every other
transcript string.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from frontend.templating import Macros, macros
from sessionledger.core.formats.steps import call_summary

EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
LOOKING = frozenset({"Read", "Grep", "Glob", "LS", "TodoWrite"})  # calls that do not end an edit burst
KINDS = ("prompt", "commit", "error", "edit")
LABEL_LIMIT = 90


@dataclass(slots=True)
class Step:
    kind: str  # prompt | commit | error | edit
    index: int  # the message the step starts at
    label: str
    timestamp: str | None
    files: list[str] = field(default_factory=list)  # an edit burst's files, in order
    count: int = 1  # an edit burst's calls
    agent: str = ""  # who made an edit burst, when a sub-agent: "Write lexer (sub-agent)"
    href: str | None = None  # filled in by the page: where the message is under the filters
    anchor: str | None = None
    page: int | None = None


def is_git_commit(command: str) -> bool:
    """Whether a shell command runs ``git commit``: split on ``;``/``&``/``|``/newlines (linear),
    then a ``git`` word followed, in the same simple command, by a ``commit`` word."""
    for part in command.replace("&", ";").replace("|", ";").replace("\n", ";").split(";"):
        words = part.split()
        if "git" in words and "commit" in words[words.index("git") + 1 :]:
            return True
    return False


def outline(messages: list[dict[str, Any]]) -> list[Step]:
    """The steps of the session, in document order."""
    steps: list[Step] = []
    bursts: dict[str, Step] = {}  # "" (the main conversation) or a sub-agent's key -> its open burst
    calls: dict[str, dict[str, Any]] = {}  # tool id -> its call's input, to label results
    commits: dict[str, Step] = {}  # tool id -> its commit step, relabelled from the result
    for message in messages:
        if message.get("sidechain"):
            _agent_edit(message, calls, bursts, steps)
            continue
        tool_id = _pair(message, calls, commits)
        step = _step(message, calls.get(tool_id))
        if step is not None and step.kind == "commit" and tool_id:
            commits[tool_id] = step
        if step is None:
            if message.get("kind") == "tool_use" and _tool_name(message) not in LOOKING:
                bursts.pop("", None)  # a test run, a fetch…: the next edit starts a new burst
            continue
        if step.kind == "edit":
            if "" in bursts:
                _extend(bursts[""], step)
                continue
            bursts[""] = step
        else:
            bursts.pop("", None)
        steps.append(step)
    for step in steps:
        if step.kind == "edit":
            step.label = _edit_label(step)
    return steps


def _agent_edit(
    message: dict[str, Any], calls: dict[str, dict[str, Any]], bursts: dict[str, Step], steps: list[Step]
) -> None:
    """A sub-agent's message: its edits join that agent's burst (or start one, named after the
    spawning call); its other calls end the burst, as in the main conversation."""
    if message.get("kind") != "tool_use":
        return
    parent = _text(message.get("parent_tool_id"))
    key = "agent:" + (_text(message.get("agent_id")) or parent)
    step = _step(message) if _tool_name(message) in EDIT_TOOLS else None
    if step is None:
        if _tool_name(message) not in LOOKING:
            bursts.pop(key, None)
        return
    if key in bursts:
        _extend(bursts[key], step)
        return
    step.agent = _agent_name(calls.get(parent))
    bursts[key] = step
    steps.append(step)


def _agent_name(call: dict[str, Any] | None) -> str:
    """The spawning call's description (or agent type); a sub-agent whose call is unknown is unnamed."""
    data = call.get("input") if call else None
    if isinstance(data, dict):
        for key in ("description", "subagent_type"):
            if name := " ".join(_text(data.get(key))[:200].split()):
                return f"{name} (sub-agent)"
    return "Sub-agent"


def _extend(burst: Step, step: Step) -> None:
    burst.count += 1
    _add_file(burst, step.files)


def _pair(message: dict[str, Any], calls: dict[str, dict[str, Any]], commits: dict[str, Step]) -> str:
    """Remember a call's input by tool id; a commit's result relabels its step. The tool id."""
    tool = found if isinstance(found := message.get("tool"), dict) else {}
    tool_id = _text(tool.get("id"))
    if message.get("kind") == "tool_use" and tool_id:
        calls[tool_id] = {"name": _text(tool.get("name")), "input": tool.get("input")}
    if message.get("kind") == "tool_result" and tool_id in commits:
        _label_commit(commits.pop(tool_id), _text(message.get("content")))
    return tool_id


def _tool_name(message: dict[str, Any]) -> str:
    tool = message.get("tool")
    return _text(tool.get("name")) if isinstance(tool, dict) else ""


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _short(text: str) -> str:
    text = " ".join(text[: LABEL_LIMIT * 4].split())
    return text if len(text) <= LABEL_LIMIT else text[: LABEL_LIMIT - 1] + "…"


def _step(message: dict[str, Any], call: dict[str, Any] | None = None) -> Step | None:
    kind, stamp = message.get("kind"), message.get("timestamp")
    stamp = stamp if isinstance(stamp, str) else None
    index = message["index"]
    if message.get("role") == "user" and kind == "prompt":
        return Step("prompt", index, _short(_text(message.get("content"))) or "(no text)", stamp)
    tool = found if isinstance(found := message.get("tool"), dict) else {}
    if kind == "tool_result" and tool.get("is_error") is True:
        return Step("error", index, _error_label(_text(tool.get("name")), _text(message.get("content")), call), stamp)
    if message.get("api_error") is True:
        return Step("error", index, _short(_text(message.get("content"))) or "API error", stamp)
    if kind != "tool_use":
        return None
    name, data = _text(tool.get("name")), tool.get("input")
    if name == "Bash" and isinstance(data, dict) and is_git_commit(command := _text(data.get("command"))[:5000]):
        subject = _message_subject(command)
        return Step("commit", index, _short(f"commit: {subject}" if subject else call_summary(data)), stamp)
    if name in EDIT_TOOLS:
        path = _text(data.get("file_path") or data.get("notebook_path")) if isinstance(data, dict) else ""
        return Step("edit", index, "", stamp, files=[path[:300]] if path else [])
    return None


def _error_label(name: str, content: str, call: dict[str, Any] | None) -> str:
    """`Bash `pytest tests/x.py` — exit 2`, or the first failing test's name; else the first line."""
    head = content[:20_000]
    lines = [line.strip() for line in head.splitlines() if line.strip()]
    failed = next(
        (line.split(None, 1)[1] for line in lines if line.startswith(("FAILED ", "ERROR ")) and " " in line), ""
    )
    data = call.get("input") if call else None
    command = _text(data.get("command")) if isinstance(data, dict) else ""
    code = _EXIT.search(lines[0]) if lines else None
    if failed:
        return _short(f"failed {failed.split(' - ', 1)[0]}")
    if command:
        exit_note = f" — exit {code.group(1)}" if code else (f" — {lines[0]}" if lines else "")
        return _short(f"{name or 'Bash'} `{_short(command)}`{exit_note}")
    first = lines[0] if lines else ""
    return _short(f"{name}: {first}" if name else first) or "error"


_EXIT = re.compile(r"\bexit code (\d{1,3})\b", re.IGNORECASE)
# `[main 1a2b3c4] Subject` / `[main (root-commit) 1a2b3c4] Subject`, git's own summary line
_COMMIT_LINE = re.compile(r"^\[[^\]\n]{0,200}?\b([0-9a-f]{7,40})\] ([^\n]{0,300})", re.MULTILINE)


def _label_commit(step: Step, result: str) -> None:
    """Relabel a commit step with the hash and subject git printed."""
    found = _COMMIT_LINE.search(result[:5000])
    if found:
        step.label = _short(f"{found.group(1)[:7]} {found.group(2).strip()}")


def _message_subject(command: str) -> str:
    """The subject a `git commit` command gives: `-m "Subject"` or the first line of a heredoc."""
    if "<<" in command:
        after = command.split("<<", 1)[1].split("\n")[1:]
        return next((line.strip() for line in after if line.strip()), "")
    for flag in (' -m "', " -m '", ' --message="', " --message='"):
        if flag in command:
            rest = command.split(flag, 1)[1]
            return rest.split(flag[-1], 1)[0].split("\n", 1)[0].strip()
    return ""


def _add_file(burst: Step, files: list[str]) -> None:
    for path in files:
        if path not in burst.files and len(burst.files) < 50:
            burst.files.append(path)


def _edit_label(step: Step) -> str:
    names = [path.rsplit("/", 1)[-1] for path in step.files]
    calls = f"{step.count} edit{'' if step.count == 1 else 's'}"
    if step.agent:
        calls = f"{step.agent}: {calls}"
    if not names:
        return _short(calls)
    shown = ", ".join(names[:3]) + (f" +{len(names) - 3}" if len(names) > 3 else "")
    return _short(f"{calls}: {shown}")


KIND_LABELS = {"prompt": "Prompt", "commit": "Commit", "error": "Error", "edit": "Edits"}


def outline_html(steps: list[Step]) -> Markup:
    """The outline's list items: kind, label and a link to the page and card of each step (the page
    passes the few hundred around it, ``frontend.session_page.reading.panel_window``; the minimap spans all)."""
    return _macros().outline(steps)


MINIMAP_HEIGHT = 1000
TICK_WEIGHT = {"edit": 0, "prompt": 1, "error": 2, "commit": 3}


@dataclass(frozen=True, slots=True)
class Tick:
    y: float  # in a viewBox MINIMAP_HEIGHT high
    height: int
    kind: str
    href: str | None


def minimap_html(steps: list[Step], total: int) -> Markup:
    """A thin SVG bar: one tick per step at its place in the session, coloured and patterned by
    class (app.css), each a link (labels: the outline beside it)."""
    if not steps or total <= 0:
        return Markup("")
    # One tick per unit of the bar, the weightiest kind winning: a session of thousands of steps
    # draws at most MINIMAP_HEIGHT ticks, which is all the bar can show apart.
    ticks: dict[int, Tick] = {}
    for step in steps:
        tick = _tick(step, total)
        held = ticks.get(int(tick.y))
        if held is None or TICK_WEIGHT[tick.kind] > TICK_WEIGHT[held.kind]:
            ticks[int(tick.y)] = tick
    return _macros().minimap(list(ticks.values()), MINIMAP_HEIGHT)


def _tick(step: Step, total: int) -> Tick:
    height = 14 if step.kind in ("prompt", "commit") else 8
    return Tick(round(step.index * MINIMAP_HEIGHT / total, 1), height, step.kind, step.href)


_HELPERS = {"kind_labels": KIND_LABELS}


def _macros() -> Macros:
    return macros("frontend/steps.html", _HELPERS)

"""Codex CLI and Gemini CLI tool calls in the shape the session page renders richly.

The session page knows Claude Code's tools (`frontend/session_page/tools.py`: `Bash` shows `input.command`, `Edit`
diffs `old_string`/`new_string` or each entry of `input.edits`, `Write` shows `content`, `TodoWrite`
shows `todos`). A call of another agent keeps all its own arguments, gains those keys, and keeps the
agent's own tool name in `tool.agent_name`:

Agent tool {its input} → shown as: added input keys.

- Codex `shell`, `container.exec` {command: argv, workdir}, `local_shell_call` {action.command} → Bash:
  `command` (the script of `bash -lc <script>`, else the argv joined), `argv`.
- Codex `exec_command` {cmd, workdir, tty, yield_time_ms}, `shell_command` → Bash: `command`.
- Codex `apply_patch` (custom tool input, `{"input"/"patch"}` arguments, `["apply_patch", patch]` argv,
  or `apply_patch <<'EOF'` in a shell command) → Edit: `file_path` (first file), `files` (all), `edits`
  (one {file_path, old_string, new_string} per hunk; Add File: old empty; Delete File: `deleted: true`),
  `patch`.
- Codex `update_plan` {plan: [{step, status}]} → TodoWrite: `todos` [{content, status}].
- Codex `view_image` {path} → Read: `file_path`. Codex `web_search_call` {action.query} → WebSearch: `query`.
- Gemini `run_shell_command` {command, description, dir_path} → Bash: `command`.
- Gemini `read_file` {absolute_path or file_path} → Read: `file_path`.
- Gemini `write_file` {file_path, content} → Write: `file_path`, `content`.
- Gemini `replace` / `edit` {file_path, old_string, new_string} → Edit: `file_path`.
- Gemini `search_file_content` / `grep_search`, `glob`, `list_directory` {pattern, path/dir_path} →
  Grep, Glob, LS: `path`.
- Gemini `google_web_search`, `web_fetch` → WebSearch, WebFetch.
- Gemini `write_todos` {todos: [{description, status}]} → TodoWrite: `todos` [{content, status}].
- Anything else (Codex `write_stdin`, `spawn_agent`; Gemini `read_many_files`, `save_memory`,
  `delegate_to_agent`; MCP tools) keeps its own name.

`files_touched` counts Edit/Write `file_path` plus every file of a multi-file patch.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from .jsonlines import text_of

Input = dict[str, Any]

_SHELLS = frozenset({"bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh", "/usr/bin/bash", "/usr/bin/zsh"})
_SHELL_FLAGS = frozenset({"-c", "-lc", "-lic", "-ic"})
_BEGIN, _END = "*** Begin Patch", "*** End Patch"
_MAX_ARGUMENTS = 4_000_000  # bigger `arguments` strings stay unparsed text


# --- Codex ------------------------------------------------------------------------------


def codex_arguments(value: Any) -> Any:
    """`function_call.arguments` is a JSON string; a dict when it parses, else the raw text."""
    if isinstance(value, dict):
        return value
    if not isinstance(value, str) or len(value) > _MAX_ARGUMENTS:
        return value
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return value
    return parsed if isinstance(parsed, dict) else value


def codex_call(name: str, args: Any) -> tuple[str, Any]:
    """(display name, input) for a Codex function/custom tool call."""
    if name == "apply_patch":
        patch = args if isinstance(args, str) else _first_str(args, "input", "patch")
        return "Edit", patch_input(patch, args)
    if not isinstance(args, dict):
        return name, args
    if name in ("shell", "container.exec", "local_shell"):
        return _shell(args.get("command"), args, workdir=args.get("workdir"))
    if name in ("exec_command", "shell_command"):
        command = text_of(args.get("cmd")) or text_of(args.get("command"))
        return _command(command, args, workdir=args.get("workdir"))
    if name == "update_plan":
        return "TodoWrite", {**args, "todos": _plan(args.get("plan"))}
    if name in ("view_image", "read_file"):
        return "Read", {**args, "file_path": _first_str(args, "path", "file_path")}
    return name, args


def codex_local_shell(action: Any) -> tuple[str, Any]:
    """A `local_shell_call` item: {action: {type: exec, command: [argv], working_directory}}."""
    if not isinstance(action, dict):
        return "Bash", {"command": ""}
    return _shell(action.get("command"), action, workdir=action.get("working_directory"))


def codex_web_search(action: Any) -> Input:
    query = _first_str(action, "query") if isinstance(action, dict) else ""
    return {**(action if isinstance(action, dict) else {}), "query": query}


def _shell(argv: Any, args: Input, *, workdir: Any) -> tuple[str, Any]:
    words = [w for w in argv if isinstance(w, str)] if isinstance(argv, list) else []
    if isinstance(argv, str):
        command = argv
    elif len(words) == 3 and words[0] in _SHELLS and words[1] in _SHELL_FLAGS:
        command = words[2]
    elif words and words[0] == "apply_patch" and len(words) == 2:
        return "Edit", patch_input(words[1], {**args, "argv": words})
    else:
        command = shlex.join(words)
    return _command(command, {**args, "argv": words}, workdir=workdir)


def _command(command: str, args: Input, *, workdir: Any) -> tuple[str, Any]:
    """A shell command; `apply_patch <<'EOF' … EOF` run through the shell is an edit."""
    head = command.lstrip()[:32]
    if head.startswith("apply_patch") and _BEGIN in command:
        start = command.find(_BEGIN)
        end = command.find(_END, start)
        patch = command[start : end + len(_END)] if end >= 0 else command[start:]
        return "Edit", patch_input(patch, args)
    shown: Input = {**args, "command": command}
    if isinstance(workdir, str):
        shown["workdir"] = workdir
    return "Bash", shown


def _plan(plan: Any) -> list[dict[str, Any]]:
    steps = plan if isinstance(plan, list) else []
    return [
        {"content": text_of(s.get("step")), "status": text_of(s.get("status")) or "pending"}
        for s in steps
        if isinstance(s, dict)
    ]


# --- apply_patch ------------------------------------------------------------------------


def patch_input(patch: str, args: Any) -> Input:
    """An `Edit`-like input for an apply_patch envelope: one entry in `edits` per hunk or file.

    `file_path` is the first file (so the session page and files_touched name it), `files` every
    file the patch adds, updates, deletes or moves to, `patch` the envelope as the model wrote it.
    """
    edits = parse_patch(patch)
    files = list(dict.fromkeys(e["file_path"] for e in edits if e["file_path"]))
    base = args if isinstance(args, dict) else {}
    return {**base, "file_path": files[0] if files else "", "files": files, "edits": edits, "patch": patch}


def parse_patch(patch: str) -> list[dict[str, Any]]:
    """Hunks of a Codex apply_patch envelope as {file_path, old_string, new_string} (one pass).

    A hunk with context lines only (an anchor before the next `@@`) joins the next hunk.
    """
    edits: list[dict[str, Any]] = []
    hunk = _Hunk()
    for line in patch.split("\n") if isinstance(patch, str) else []:
        header = _file_header(line)
        if header is not None:
            hunk.flush(edits)
            hunk = _Hunk(*header)
        elif line.startswith("*** Move to: ") and hunk.path:
            hunk.path = line[len("*** Move to: ") :].strip()
        elif line.startswith("@@") and hunk.action == "update" and hunk.changed:
            hunk.flush(edits)
            hunk = _Hunk("update", hunk.path)
        elif not line.startswith(("***", "@@")) and hunk.action in ("add", "update") and line[:1] in ("+", "-", " "):
            hunk.take(line)
    hunk.flush(edits)
    return edits


class _Hunk:
    def __init__(self, action: str = "", path: str = "") -> None:
        self.action, self.path = action, path
        self.old: list[str] = []
        self.new: list[str] = []
        self.changed = False

    def take(self, line: str) -> None:
        mark, text = line[0], line[1:]
        if mark != "+":
            self.old.append(text)
        if mark != "-":
            self.new.append(text)
        self.changed = self.changed or mark != " "

    def flush(self, edits: list[dict[str, Any]]) -> None:
        if not self.path or (self.action == "update" and not self.changed):
            return
        entry: dict[str, Any] = {
            "file_path": self.path,
            "old_string": "\n".join(self.old),
            "new_string": "\n".join(self.new),
        }
        if self.action == "delete":
            entry["deleted"] = True
        edits.append(entry)


def _file_header(line: str) -> tuple[str, str] | None:
    for prefix, action in (("*** Add File: ", "add"), ("*** Update File: ", "update"), ("*** Delete File: ", "delete")):
        if line.startswith(prefix):
            return action, line[len(prefix) :].strip()
    return None


# --- Gemini -----------------------------------------------------------------------------


# Gemini tool -> (display name, the key its path goes under); the rest keep their own name.
_GEMINI_PATH_TOOLS = {
    "read_file": ("Read", "file_path"),
    "replace": ("Edit", "file_path"),
    "edit": ("Edit", "file_path"),
    "search_file_content": ("Grep", "path"),
    "grep_search": ("Grep", "path"),
    "grep": ("Grep", "path"),
    "glob": ("Glob", "path"),
    "list_directory": ("LS", "path"),
}
_GEMINI_RENAMED = {"google_web_search": "WebSearch", "web_fetch": "WebFetch"}


def gemini_call(name: str, args: Any) -> tuple[str, Any]:
    """(display name, input) for a Gemini CLI tool call (its built-in tool names)."""
    if not isinstance(args, dict):
        return name, args
    path = _first_str(args, "file_path", "absolute_path", "path", "dir_path")
    if name in _GEMINI_PATH_TOOLS:
        display, key = _GEMINI_PATH_TOOLS[name]
        return display, {**args, key: path}
    if name == "run_shell_command":
        return "Bash", {**args, "command": _first_str(args, "command")}
    if name == "write_file":
        return "Write", {**args, "file_path": path, "content": _first_str(args, "content")}
    if name == "write_todos":
        return "TodoWrite", {**args, "todos": _todos(args.get("todos"))}
    return _GEMINI_RENAMED.get(name, name), args


def _todos(todos: Any) -> list[dict[str, Any]]:
    items = todos if isinstance(todos, list) else []
    return [
        {"content": _first_str(t, "description", "content"), "status": text_of(t.get("status")) or "pending"}
        for t in items
        if isinstance(t, dict)
    ]


def _first_str(args: Any, *keys: str) -> str:
    if not isinstance(args, dict):
        return ""
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    return ""

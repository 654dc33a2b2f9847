"""The files a conversation wrote between a commit and a step, written again into a fork's worktree
(docs/client.md "Steps"): a fork at a step between two commits starts from the earlier commit, and
the conversation's own file writes since it — Write, Edit, MultiEdit, NotebookEdit, Codex's
`apply_patch` (an `Edit` with `edits`) — are replayed in order, so the resumed session finds the
tree its history describes.

Each write is checked before it is applied: an Edit whose `old_string` is not in the file is not
applied (and said so), a path that leaves the worktree is refused (`confined`: the transcript is a
teammate's words), so is a path git reads as a repository or as configuration (`refused_path`), and
what no tool call records — files written by shell commands — is listed as not reproduced, never
guessed at. An Edit of a file the commit does not have (a gitignored `.env`, say) starts from the text
Claude Code recorded in its result (`core.formats.originals`), so that file is restored too —
unless that copy was redacted, which would plant `[REDACTED:…]` markers in it.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sessionledger.commands.common import CommandError, confined

WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
_SHELL_TOOLS = frozenset({"Bash", "run_shell_command", "shell"})
# A shell command that may change files: a redirect into a file, or a command that writes.
_SHELL_WRITES = re.compile(
    r"(?:^|[;&|(]\s*)(?:sudo\s+)?(?:mv|cp|rm|rmdir|touch|mkdir|ln|tee|patch|truncate|install|chmod|dd)\b"
    r"|(?:^|\s)(?:sed|perl)\s+(?:-\w+\s+)*-i"
    r"|\bgit\s+(?:mv|rm|checkout|restore|apply|am|stash|reset|merge|rebase|cherry-pick|pull)\b"
    r"|(?<![0-9&])>>?\s*(?!&|/dev/null)[^\s&|;]"
)
MAX_SHELL = 4000  # characters of a shell command examined for writes
REDACTED_MARK = "[REDACTED:"  # what redaction leaves in place of a secret (docs/redaction.md)


@dataclass(frozen=True)
class Refusal:
    """A write replay would not make: the tool, the path as the worktree names it, and why."""

    tool: str
    path: str
    why: str


@dataclass
class Replayed:
    """What replaying did: files written, each change that could not be reproduced, and each
    write refused because of where it would land (`refused_path`)."""

    written: list[str] = field(default_factory=list)
    not_reproduced: list[str] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)  # absent from the commit: rebuilt from an Edit's result


# Code points HFS+ leaves out of a name (git's utf8.c `next_hfs_char`): `.g\u200cit` is `.git` there.
_HFS_IGNORED = dict.fromkeys([0x200C, 0x200D, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF])
_SHORT_NAME = re.compile(r"([a-z0-9]{1,6})~[0-9]+")  # an NTFS 8.3 alias: `GIT~1`, `GITMOD~1`
# Folded name -> (the prefixes its 8.3 aliases start with, why git or Git LFS must not find it written).
_GIT_READS = {
    ".git": (("git",), "git opens it as .git, the repository, whose config names commands to run"),
    ".gitmodules": (("gitmod", "gi7eba"), "git reads it as .gitmodules, submodule configuration"),
    ".gitattributes": (("gitatt", "gi7d29"), "git reads it as .gitattributes, which picks filter and diff commands"),
    ".lfsconfig": (("lfscon",), "Git LFS reads it as .lfsconfig, its configuration"),
}
_HEAD = "a file named HEAD makes its directory a repository to git, whose config names commands to run"
# Folded path (at any depth: the agent starts in the session's directory) -> why: files an agent reads
# when `fork --exec` starts it in the fork, each naming commands it runs (hooks, helpers, MCP servers).
_AGENT_READS = {
    ".claude/settings.json": "Claude Code runs the hooks and helpers its project settings name",
    ".claude/settings.local.json": "Claude Code runs the hooks and helpers its local settings name",
    ".mcp.json": "Claude Code starts the MCP servers it names",
    ".gemini/settings.json": "Gemini CLI runs the hooks and starts the MCP servers its settings name",
    ".codex/config.toml": "Codex CLI runs the commands and MCP servers its project config names",
}


def refused_path(relative: str) -> str | None:
    """Why replay must not write, edit, create, delete or rename ``relative`` (a path inside the
    worktree), or None: replay writes a teammate's words onto your machine, and git runs commands
    that its configuration names (`core.fsmonitor`, `core.pager`, `core.editor`, hooks) on your
    next `git status`. So no component may be what a filesystem opens as `.git` — a `.git` file
    saying `gitdir: planted/` makes a planted directory the fork's repository — nor may the path be
    another file git or Git LFS reads as configuration from the tree: `.gitmodules`, `.gitattributes`
    (it picks which of your configured filter, diff and merge drivers run on which files, and its
    parser has had memory-safety bugs), `.lfsconfig`; nor a file named HEAD, which with `objects/` and
    `refs/` beside it turns any directory into a bare repository git uses when run inside it.

    Names are compared as the filesystems that may hold the worktree fold them, stricter than git's
    own `verify_path`: case-insensitively (with Unicode folding), without the code points HFS+
    ignores, without trailing dots and spaces or an NTFS `:stream`, and as 8.3 aliases (`git~1`);
    `\\` separates components too. `.gitignore` and other files stay allowed: git reads them as
    data, not commands. The agents' own project settings (`.claude/settings.json`, `.mcp.json`, …, at any
    depth) are refused too: `fork --exec` starts the agent there at once, and they name
    commands it runs.
    """
    parts = [p for p in re.split(r"[\\/]", relative) if p not in ("", ".")]
    folded = "/" + "/".join(_folded(part) for part in parts)
    if why := next((why for name, why in _AGENT_READS.items() if folded.endswith("/" + name)), None):
        return why
    for index, part in enumerate(parts):
        name = _folded(part)
        last = index == len(parts) - 1
        short = _SHORT_NAME.fullmatch(name)
        for reserved, (aliases, why) in _GIT_READS.items():
            if (name == reserved or (short and any(a.startswith(short[1]) for a in aliases))) and (
                last or reserved == ".git"
            ):
                return why
        if last and name == "head":
            return _HEAD
    return None


def _folded(name: str) -> str:
    """``name`` as case-insensitive HFS+ and NTFS compare it (`.G\\u200cIT. ` is `.git`)."""
    name = unicodedata.normalize("NFKC", name.translate(_HFS_IGNORED)).upper().lower()
    return name.split(":", 1)[0].rstrip(". ")  # `.git::$INDEX_ALLOCATION` is `.git` on NTFS


def replay(
    messages: Iterable[Mapping[str, Any]],
    *,
    worktree: str,
    cwd_from: str,
    cwd: str,
    originals: Mapping[str, str] | None = None,
) -> Replayed:
    """Apply the file writes of `messages` (content-document messages, in order) to `worktree`.
    A path under `cwd_from` (where the conversation ran) moves under `worktree`; a relative one
    is taken from `cwd` (the session's directory in the worktree). `originals`
    (`core.formats.originals.original_files`) gives an edit of a file the worktree lacks the text it
    started from."""
    messages = list(messages)
    failed = {_tool(m).get("id") for m in messages if m.get("kind") == "tool_result" and _tool(m).get("is_error")}
    done = Replayed()
    where = _Paths(worktree, cwd_from, cwd)
    for message in messages:
        tool = _tool(message)
        name, arguments = str(tool.get("name") or ""), tool.get("input")
        if message.get("kind") != "tool_use" or not isinstance(arguments, dict) or tool.get("id") in failed:
            continue
        if name in WRITE_TOOLS:
            _apply(name, arguments, where, done, (originals or {}).get(str(tool.get("id"))))
        elif name in _SHELL_TOOLS:
            command = str(arguments.get("command") or "")
            if _SHELL_WRITES.search(command[:MAX_SHELL]):
                done.not_reproduced.append(f"shell command `{_one_line(command)}` (its writes are not recorded)")
    return done


class _Paths:
    def __init__(self, worktree: str, cwd_from: str, cwd: str) -> None:
        self.worktree, self.cwd_from, self.cwd = worktree, cwd_from.rstrip(os.sep), cwd

    def local(self, path: str) -> str:
        """The worktree's file for a path the conversation wrote (CommandError: outside it;
        _GitRefused: `refused_path`, as named or once symlinks are followed)."""
        if path == self.cwd_from or path.startswith(self.cwd_from + os.sep):
            mapped = self.worktree + path[len(self.cwd_from) :]
        elif os.path.isabs(path):
            mapped = path  # elsewhere on the recording machine: refused below
        else:
            mapped = os.path.join(self.cwd, path)
        resolved = confined(mapped, self.worktree, "a file the conversation wrote,")
        named = os.path.relpath(mapped, self.worktree)
        if why := refused_path(named):
            raise _GitRefused(named, why)
        target = os.path.relpath(resolved, os.path.realpath(self.worktree))
        if why := refused_path(target):  # a committed symlink `docs -> .git`
            raise _GitRefused(named, f"it leads to {target}; {why}")
        return resolved


def _apply(name: str, arguments: Mapping[str, Any], where: _Paths, done: Replayed, original: str | None) -> None:
    path = _text(arguments.get("file_path")) or _text(arguments.get("notebook_path"))
    edits = arguments.get("edits")
    if name == "Edit" and isinstance(edits, list) and "patch" in arguments:  # Codex apply_patch
        for edit in edits:
            if isinstance(edit, dict):
                _apply_one("apply_patch", _text(edit.get("file_path")), [edit], where, done)
        return
    if name == "Write":
        _apply_one(name, path, [{"content": arguments.get("content")}], where, done)
    elif name == "Edit":
        _apply_one(name, path, [arguments], where, done, original)
    elif name == "MultiEdit":
        listed: list[Mapping[str, Any]] = [e for e in edits if isinstance(e, dict)] if isinstance(edits, list) else []
        _apply_one(name, path, listed, where, done, original)
    elif name == "NotebookEdit":
        _apply_one(name, path, [{"notebook": arguments}], where, done)


def _apply_one(
    tool: str, path: str, edits: list[Mapping[str, Any]], where: _Paths, done: Replayed, original: str | None = None
) -> None:
    if not path:
        done.not_reproduced.append(f"{tool} without a file path")
        return
    try:
        local = where.local(path)
    except CommandError as exc:
        done.not_reproduced.append(f"{tool} {path}: {exc}")
        return
    except _GitRefused as exc:
        done.refused.append(Refusal(tool, exc.path, exc.why))
        return
    relative = os.path.relpath(local, where.worktree)
    try:
        after, restoring = _starting_text(local, original)
        for edit in edits:
            after = _edited(after, edit, local)
    except _Refused as exc:
        done.not_reproduced.append(f"{tool} {relative}: {exc}")
        return
    if after is None:
        if os.path.lexists(local):
            os.remove(local)
    else:
        os.makedirs(os.path.dirname(local), exist_ok=True)
        with open(local, "w", encoding="utf-8", newline="") as handle:
            handle.write(after)
    if restoring and relative not in done.restored:
        done.restored.append(relative)
    if relative not in done.written:
        done.written.append(relative)


def _starting_text(local: str, original: str | None) -> tuple[str | None, bool]:
    """The text an edit starts from, and whether it is the transcript's copy (the worktree lacks the
    file: it is not in the commit). A redacted copy would plant markers in the file: _Refused."""
    before = _read(local)
    if before is not None or original is None:
        return before, False
    if REDACTED_MARK in original:
        raise _Refused("not in the commit, and the transcript's copy of it is redacted")
    return original, True


class _Refused(Exception):
    pass


class _GitRefused(Exception):
    def __init__(self, path: str, why: str) -> None:
        super().__init__(why)
        self.path, self.why = path, why


def _edited(text: str | None, edit: Mapping[str, Any], path: str) -> str | None:
    """The file's text after one edit (None: deleted); _Refused when it does not apply."""
    if "content" in edit:
        if not isinstance(edit["content"], str):
            raise _Refused("no content")
        return edit["content"]
    if "notebook" in edit:
        return _notebook(text, edit["notebook"])
    if edit.get("deleted"):
        return None
    old, new = _text(edit.get("old_string")), edit.get("new_string")
    if not isinstance(new, str):
        raise _Refused("no new_string")
    if text is None:
        if old:
            raise _Refused("the file does not exist at this point")
        return new + ("\n" if new and not new.endswith("\n") else "")  # an added file (apply_patch)
    if not old:
        raise _Refused("an empty old_string on an existing file")
    if old not in text:
        raise _Refused("old_string not found: the file differs from what the conversation edited")
    return text.replace(old, new) if edit.get("replace_all") else text.replace(old, new, 1)


def _notebook(text: str | None, arguments: Mapping[str, Any]) -> str:
    """NotebookEdit: replace, insert or delete one cell (by `cell_id`, else `cell_number`)."""
    if text is None:
        raise _Refused("the notebook does not exist at this point")
    try:
        notebook = json.loads(text)
        cells = notebook["cells"]
    except (ValueError, KeyError, TypeError):
        raise _Refused("not a notebook") from None
    mode = _text(arguments.get("edit_mode")) or "replace"
    index = _cell_index(cells, arguments)
    source = _text(arguments.get("new_source"))
    lines = [line + "\n" for line in source.split("\n")]
    lines[-1] = lines[-1][:-1]
    if mode == "insert":
        kind = _text(arguments.get("cell_type")) or "code"
        cell: dict[str, Any] = {"cell_type": kind, "metadata": {}, "source": lines}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        cells.insert(0 if index is None else index + 1, cell)
    elif index is None or not 0 <= index < len(cells):
        raise _Refused("the cell to edit is not in the notebook")
    elif mode == "delete":
        del cells[index]
    else:
        cells[index]["source"] = lines
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def _cell_index(cells: list[Any], arguments: Mapping[str, Any]) -> int | None:
    cell_id = arguments.get("cell_id")
    if isinstance(cell_id, str) and cell_id:
        for index, cell in enumerate(cells):
            if isinstance(cell, dict) and cell.get("id") == cell_id:
                return index
        return int(cell_id[5:]) if cell_id.startswith("cell-") and cell_id[5:].isdigit() else None
    number = arguments.get("cell_number")
    return number if isinstance(number, int) else None


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise _Refused(f"cannot read it ({exc.__class__.__name__})") from None


def _tool(message: Mapping[str, Any]) -> dict[str, Any]:
    tool = message.get("tool")
    return tool if isinstance(tool, dict) else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _one_line(command: str) -> str:
    line = " ".join(command.split())
    return line if len(line) <= 80 else line[:79] + "…"

"""Which lines of a commit the agent wrote, and in which step: an Agent Trace record.

Computed by the client when it prepares a checkpoint segment (and by the server, with the same
code, for commits captured before this existed): every line the commit adds is matched against
the lines the segment's file-writing tool calls wrote (Edit, Write, MultiEdit, NotebookEdit, and
best effort a Bash heredoc `cat > file <<EOF`). A line some call wrote belongs to the *last* call
that wrote it; a line no call wrote is the human's. Short lines with nothing to recognise them by
(`}`, blank, `end`) only count as the agent's when a neighbouring added line came from the same
call, so a closing brace the human typed is not credited to whichever call last wrote a brace.

The record (`attribution_record.py`) follows Agent Trace v0.1.0 (agent-trace.dev): files →
conversations → ranges, one conversation per step (tool call) whose `url` is the message's permalink
on the server, plus one `human` conversation per file. Implementation data sits under
`metadata["dev.sessionledger"]`: the steps (prompt index, message uuid, model, tool), each file's
line count at the commit (the server refuses ranges beyond it) and a short hash of every added line,
which lets `blame` find a line again after a rebase or squash moved it (docs/attribution.md).

Standard library only: the server imports it too. Every input is untrusted transcript text;
everything here is linear in it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

SPEC_VERSION = "0.1.0"
VENDOR = "dev.sessionledger"
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
MAX_LINE = 4000  # longer lines are compared by hash only, never scanned by a regex
_HEREDOC = re.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z_][A-Za-z0-9_]{0,40})\1")
_REDIRECT = re.compile(r"(?:>>?|\btee(?:[ \t]+-a)?)[ \t]*([^\s;&|<>'\"]+)")


@dataclass
class Step:
    """One tool call that wrote lines into one file."""

    uuid: str
    tool: str
    path: str
    lines: list[str]
    order: int
    turn: int | None = None
    model: str = ""
    prompt: str = ""
    keys: frozenset[str] = field(default_factory=frozenset)
    fragments: tuple[str, ...] = ()  # parts of lines an Edit replaced inside a line (a rename)

    def __post_init__(self) -> None:
        self.keys = frozenset(key_hash(line_key(line)) for line in self.lines)


@dataclass(frozen=True)
class Move:
    """A file the conversation moved (`mv`, `git mv` in a shell call): `source` → `target`, as
    written in the command (relative to the shell's directory, or absolute)."""

    source: str
    target: str
    order: int


@dataclass(frozen=True)
class Line:
    """An added line, known by the hash of its key: the server matches lines it never sees."""

    number: int
    hash: str
    trivial: bool
    text: str = ""

    @classmethod
    def of(cls, number: int, text: str, path: str = "") -> Line:
        key = _match_key(path, text)
        return cls(number, key_hash(key), is_trivial(key), text)


def line_key(text: str) -> str:
    """What two lines must share to be the same line (indentation and line endings aside)."""
    return text.strip()


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def line_hash(text: str, path: str = "") -> str:
    """The hash `blame` compares: of the line's key (a re-indented line is the same line)."""
    return key_hash(_match_key(path, text))


def is_trivial(key: str) -> bool:
    """Too short or too bare to tell who wrote it on its own."""
    return len(key) < 4 or not any(ch.isalnum() for ch in key)


# --- the segment's edits --------------------------------------------------------------------


def steps_from_messages(messages: Iterable[Mapping[str, Any]]) -> list[Step]:
    """The file-writing tool calls of a parsed transcript (the content document's messages)."""
    messages = list(messages)
    failed = {_tool(m).get("id") for m in messages if m.get("kind") == "tool_result" and _tool(m).get("is_error")}
    prompts: dict[Any, str] = {}
    steps: list[Step] = []
    for message in messages:
        if message.get("kind") == "prompt" and message.get("turn") not in prompts:
            prompts[message.get("turn")] = str(message.get("uuid") or "")
        tool = _tool(message)
        if message.get("kind") != "tool_use" or not isinstance(tool.get("input"), dict):
            continue
        if tool.get("id") and tool.get("id") in failed:
            continue
        name = str(tool.get("name") or "")
        fragments = partial_lines(name, tool["input"])
        for path, lines in written_lines(name, tool["input"]):
            step = Step(
                uuid=str(message.get("uuid") or ""),
                tool=str(tool.get("name") or ""),
                path=path,
                lines=lines,
                order=len(steps),
                turn=found if isinstance(found := message.get("turn"), int) else None,
                model=found if isinstance(found := message.get("model"), str) else "",
                prompt=prompts.get(message.get("turn"), ""),
                fragments=tuple(fragments.get(path, ())),
            )
            steps.append(step)
    return steps


def moves_from_messages(messages: Iterable[Mapping[str, Any]]) -> list[Move]:
    """The files the conversation's shell calls moved (`mv`, `git mv`), in transcript order. A
    call whose result is an error moved nothing."""
    messages = list(messages)
    failed = {_tool(m).get("id") for m in messages if m.get("kind") == "tool_result" and _tool(m).get("is_error")}
    moves: list[Move] = []
    for message in messages:
        tool = _tool(message)
        arguments = tool.get("input")
        if message.get("kind") != "tool_use" or not isinstance(arguments, dict) or tool.get("id") in failed:
            continue
        command = _text(arguments.get("command"))
        if command and "mv" in command:
            moves += [Move(source, target, len(moves)) for source, target in shell_moves(command)]
    return moves


MAX_COMMAND = 20_000  # a longer shell command is not read for moves


def shell_moves(command: str) -> list[tuple[str, str]]:
    """(source, target) of each file a command's `mv` or `git mv` moves; a target that is a
    directory gets the source's name. Best effort: quoting as the shell does, nothing expanded."""
    import shlex

    if len(command) > MAX_COMMAND:
        return []
    found: list[tuple[str, str]] = []
    for line in command.split("\n"):
        if "mv" not in line:
            continue
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()")
        lexer.whitespace_split = True
        try:
            tokens = list(lexer)
        except ValueError:
            continue
        words: list[str] = []
        for token in [*tokens, ";"]:
            if token.strip(";&|()"):
                words.append(token)
                continue
            found += _moves_of(words)
            words = []
    return found


def _moves_of(words: list[str]) -> list[tuple[str, str]]:
    if words[:2] == ["git", "mv"]:
        args = words[2:]
    elif words[:1] == ["mv"]:
        args = words[1:]
    else:
        return []
    paths = [word for word in args if not word.startswith("-")]
    if len(paths) < 2:
        return []
    *sources, target = paths
    into_directory = len(sources) > 1 or target.endswith("/")
    return [(source, _joined(target, source) if into_directory else target) for source in sources]


def _joined(directory: str, source: str) -> str:
    return directory.rstrip("/") + "/" + source.rstrip("/").rsplit("/", 1)[-1]


def partial_lines(name: str, arguments: Mapping[str, Any]) -> dict[str, list[str]]:
    """Per file, the text an Edit put *inside* a line: a one-line `new_string` replacing a
    one-line `old_string` (a `replace_all` rename, a changed argument). The line it lands in is
    not the fragment, so only a line containing it can be matched."""
    if name not in ("Edit", "MultiEdit"):
        return {}
    pairs = _edit_pairs(_text(arguments.get("file_path")), arguments)
    found: dict[str, list[str]] = {}
    for where, edit in pairs:
        old, new = _text(edit.get("old_string")), _text(edit.get("new_string"))
        fragment = new.strip()
        if (
            where
            and old
            and "\n" not in old
            and "\n" not in new
            and not is_trivial(fragment)
            and len(fragment) <= MAX_LINE
        ):
            found.setdefault(where, []).append(fragment)
    return found


def _tool(message: Mapping[str, Any]) -> dict[str, Any]:
    tool = message.get("tool")
    return tool if isinstance(tool, dict) else {}


def written_lines(name: str, arguments: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """(file path, lines written) for each file one call wrote into."""
    path = _text(arguments.get("file_path")) or _text(arguments.get("notebook_path"))
    if name == "Write":
        return [(path, _split(arguments.get("content")))] if path else []
    if name == "NotebookEdit":
        return [(path, _split(arguments.get("new_source")))] if path else []
    if name in ("Edit", "MultiEdit"):
        return _edits(path, arguments)
    if name == "Bash":
        return heredoc_writes(_text(arguments.get("command")))
    return []


def _edit_pairs(path: str, arguments: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(file, edit) of an Edit call and of each of a MultiEdit's `edits` (their own path, else the call's)."""
    edits = arguments.get("edits")
    if not isinstance(edits, list):
        return [(path, arguments)]
    return [(path, arguments), *((_text(e.get("file_path")) or path, e) for e in edits if isinstance(e, dict))]


def _edits(path: str, arguments: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    found: dict[str, list[str]] = {}
    pairs = _edit_pairs(path, arguments)
    for where, edit in pairs:
        if where and isinstance(edit.get("new_string"), str):
            found.setdefault(where, []).extend(inserted(_text(edit.get("old_string")), edit["new_string"]))
    return list(found.items())


def inserted(old: str, new: str) -> list[str]:
    """The lines an edit wrote: `new` without the lines it shares with `old` at either end (the
    context the model repeats to anchor the edit did not come from this call)."""
    before, after = old.split("\n"), new.split("\n")
    start = 0
    while start < min(len(before), len(after)) and before[start] == after[start]:
        start += 1
    end = 0
    while end < min(len(before), len(after)) - start and before[-1 - end] == after[-1 - end]:
        end += 1
    return after[start : len(after) - end]


def heredoc_writes(command: str) -> list[tuple[str, list[str]]]:
    """Files a shell command writes with a heredoc (`cat > f <<'EOF'` … `EOF`): best effort."""
    found: list[tuple[str, list[str]]] = []
    lines = command.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index][:MAX_LINE]
        index += 1
        marker = _HEREDOC.search(line) if "<<" in line else None
        target = _REDIRECT.search(line) if marker else None
        if marker is None or target is None:
            continue
        body: list[str] = []
        while index < len(lines) and lines[index].strip() != marker.group(2):
            body.append(lines[index])
            index += 1
        index += 1
        found.append((target.group(1), body))
    return found


def _split(value: Any) -> list[str]:
    return value.split("\n") if isinstance(value, str) else []


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


# --- the commit's added lines -----------------------------------------------------------------


def added_lines(diff: str) -> dict[str, list[Line]]:
    """Added lines per file of a unified diff (`git diff-tree -p -U0 --no-renames`)."""
    found: dict[str, list[Line]] = {}
    path, number = "", 0
    for raw in diff.split("\n"):
        if raw.startswith("diff --git "):
            path, number = "", 0
        elif raw.startswith("+++ "):
            path = _diff_path(raw[4:])
        elif raw.startswith("@@ ") and path:
            number = _hunk_start(raw)
        elif raw.startswith("+") and path and number:
            found.setdefault(path, []).append(Line.of(number, raw[1:], path))
            number += 1
    return found


def _diff_path(text: str) -> str:
    text = text.rstrip("\t")
    if text == "/dev/null":
        return ""
    if text.startswith('"'):
        text = _unquote(text)
    return text[2:] if text.startswith("b/") else text


def _unquote(text: str) -> str:
    """Git's C-style quoting of an unusual path (`"b/a\\tb"`)."""
    inner = text[1:-1] if text.endswith('"') and len(text) > 1 else text[1:]
    try:
        return inner.encode("latin-1", "backslashreplace").decode("unicode_escape").encode("latin-1").decode("utf-8")
    except (UnicodeError, ValueError):
        return inner


def _hunk_start(header: str) -> int:
    """The new side's first line of `@@ -a,b +c,d @@` (0 when the hunk adds nothing)."""
    try:
        new = header.split(" ", 3)[2]
        start, _, count = new[1:].partition(",")
        return int(start) if count != "0" else 0
    except (IndexError, ValueError):
        return 0


# --- matching ------------------------------------------------------------------------------------


def path_matches(written: str, repo_path: str, root: str = "") -> bool:
    """Does a tool call's path (usually absolute) name the repository file `repo_path`?"""
    if root and written.startswith(root.rstrip("/") + "/"):
        return written[len(root.rstrip("/")) + 1 :] == repo_path
    return written == repo_path or written.endswith("/" + repo_path)


def attribute(
    added: Mapping[str, list[Line]],
    steps: list[Step],
    root: str = "",
    moves: Iterable[Move] = (),
    renamed: Mapping[str, str] | None = None,
) -> dict[str, list[Step | None]]:
    """For each file, the step that wrote each added line (None: the human).

    A file's steps include those that wrote it under an earlier name: one a shell call moved to
    it (`moves`), or one git found renamed to it in the commit (`renamed`: new path → old path).
    A line no step wrote whole goes to the last step that put a fragment into it (a rename
    inside the line), when the line's text is known (on the client)."""
    moves = list(moves)
    result: dict[str, list[Step | None]] = {}
    for path, lines in added.items():
        names = former_names(path, moves, root, renamed or {})
        candidates = [s for s in steps if any(path_matches(s.path, name, root) for name in names)]
        owners = [None if line.trivial else _last_writer(candidates, line.hash) for line in lines]
        _fragment_writers(lines, owners, candidates)
        settled = _closers(lines, owners)
        _neighbours(lines, owners, settled)
        result[path] = owners
    return result


MAX_MOVES = 1000  # names followed back per file


def former_names(path: str, moves: list[Move], root: str, renamed: Mapping[str, str]) -> list[str]:
    """`path` and every name its file had before moves: a move whose target names one of them
    adds its source, latest moves first (a chain a → b → c is followed back)."""
    names = [path]
    if path in renamed:
        names.append(renamed[path])
    for move in reversed(moves[-MAX_MOVES:]):
        targets = (move.target, _joined(move.target, move.source))  # `mv a.py lib`: lib may be a directory
        if any(path_matches(t, name, root) or _same_file(t, name) for t in targets for name in names):
            source = _relative(move.source, root)
            if source not in names:
                names.append(source)
    return names


def _same_file(written: str, name: str) -> bool:
    """A relative path in a shell command names `name` when one is a suffix of the other."""
    written = written.removeprefix("./")
    return bool(written) and not written.startswith("/") and (name == written or name.endswith("/" + written))


def _relative(path: str, root: str) -> str:
    root = root.rstrip("/")
    if root and path.startswith(root + "/"):
        return path[len(root) + 1 :]
    return path.removeprefix("./")


MAX_FRAGMENTS = 500  # partial edits looked at per file


def _fragment_writers(lines: list[Line], owners: list[Step | None], candidates: list[Step]) -> None:
    partial = [step for step in candidates if step.fragments][-MAX_FRAGMENTS:]
    if not partial:
        return
    for index, line in enumerate(lines):
        if owners[index] is not None or line.trivial or not line.text:
            continue
        text = line.text[:MAX_LINE]
        for step in reversed(partial):
            if any(fragment in text for fragment in step.fragments):
                owners[index] = step
                break


def _match_key(path: str, text: str) -> str:
    key = line_key(text[:MAX_LINE] if len(text) > MAX_LINE else text)
    if path.endswith(".ipynb") and key.startswith('"'):
        key = _notebook_source(key)
    return key


def _notebook_source(key: str) -> str:
    """A notebook line (`"x = 1\\n",` in the JSON) as the source line NotebookEdit wrote."""
    try:
        value = json.loads(key.rstrip(","))
    except ValueError:
        return key
    return line_key(value) if isinstance(value, str) else key


def _last_writer(candidates: list[Step], key: str) -> Step | None:
    for step in reversed(candidates):
        if key in step.keys:
            return step
    return None


def _closers(lines: list[Line], owners: list[Step | None]) -> set[int]:
    """A closing line (`}`, `end`: trivial, not blank) belongs with the line that opened its
    block: the nearest added line above it, in the same run, indented as it is. Its step takes
    it if it wrote one; a human's opener keeps it human. Client only (it needs the text); returns
    the indexes settled as the human's, which `_neighbours` leaves alone. Linear: the open
    blocks are a stack, each line pushed and popped once."""
    settled: set[int] = set()
    blocks: list[tuple[int, int]] = []  # (indentation, index) of recognisable lines, indentation rising
    for index, line in enumerate(lines):
        if index and not _adjacent(lines, index - 1, index):
            blocks = []
        stripped = line.text.lstrip()
        if not stripped or len(line.text) > MAX_LINE:
            continue
        indent = len(line.text) - len(stripped)
        while blocks and (blocks[-1][0] > indent or (not line.trivial and blocks[-1][0] == indent)):
            blocks.pop()
        if not line.trivial:
            blocks.append((indent, index))
        elif blocks and blocks[-1][0] == indent:
            _close(line, index, owners, owners[blocks.pop()[1]], settled)
    return settled


def _close(line: Line, index: int, owners: list[Step | None], opener: Step | None, settled: set[int]) -> None:
    if owners[index] is not None:
        return
    if opener is None:
        settled.add(index)
    elif line.hash in opener.keys:
        owners[index] = opener


def _neighbours(lines: list[Line], owners: list[Step | None], settled: set[int]) -> None:
    """A run of trivial lines is claimed from its ends by the steps beside it, each as far as
    it wrote those lines, the later step first (blank lines between two calls' code came with
    the second call; a brace after the agent's block is not the agent's because it wrote one).
    Lines `settled` as the human's are neither claimed nor part of a run."""

    def free(k: int) -> bool:
        return owners[k] is None and lines[k].trivial and k not in settled

    i = 0
    while i < len(lines):
        if not free(i):
            i += 1
            continue
        j = i
        while j + 1 < len(lines) and free(j + 1) and _adjacent(lines, j, j + 1):
            j += 1
        left = owners[i - 1] if i > 0 and _adjacent(lines, i - 1, i) else None
        right = owners[j + 1] if j + 1 < len(lines) and _adjacent(lines, j, j + 1) else None
        sides = [(step, walk) for step, walk in ((left, range(i, j + 1)), (right, range(j, i - 1, -1))) if step]
        for step, walk in sorted(sides, key=lambda side: -side[0].order):
            for k in walk:
                if owners[k] is not None or lines[k].hash not in step.keys:
                    break
                owners[k] = step
        i = j + 1


def _adjacent(lines: list[Line], a: int, b: int) -> bool:
    """Lines a..b (indexes) are consecutive lines of the file."""
    return lines[b].number - lines[a].number == b - a

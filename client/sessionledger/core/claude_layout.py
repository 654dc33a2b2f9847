"""Where Claude Code keeps its files: `~/.claude` (`CLAUDE_CONFIG_DIR`), `projects/<encoded cwd>/`,
`<session id>.jsonl`, sub-agents named `agent-<id>.jsonl`. Shared by its format (`formats/claude_code.py`), its
adapter (`agents/claude_code.py`) and the module that writes sessions back (`agents/claude_files.py`).
`os` only, and outside `formats/` so that the hooks import it without the formats package; a commit
capture of a Claude Code transcript asks it, not the adapter, for the session id and the sub-agent
files (`segments.Request`), and so imports no adapter module; the git post-commit hook asks it
for the recent sessions of a working tree (`recent_files`) and whether our tool hook is installed.
"""

from __future__ import annotations

import os

AGENT_NAME = "claude-code"  # its ingest `agent` name (`sessionledger.agents`)
SHELL_MARKER = "CLAUDECODE"  # set to 1 for the commands of its Bash tool
SUFFIX = ".jsonl"
SUBAGENT_PREFIX = "agent-"


def claude_dir() -> str:
    """Claude Code's root (`CLAUDE_CONFIG_DIR` moves it)."""
    return os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")


# --- the project directory name for a working directory ---------------------------------------
# Every character that is not an ASCII letter or digit becomes "-"; a name over 200 characters is
# cut to 200 and "-<hash>" is appended. The hash is the one the Node build of the CLI uses (Java's
# String.hashCode over UTF-16 code units, as a signed 32-bit int, absolute value, base 36). The Bun
# build uses Bun.hash instead, so over-long paths from Bun builds will not match; we cannot
# reproduce that hash with the standard library, and such paths are rare. JavaScript works on
# UTF-16 code units, so a character outside the BMP becomes two "-" here too.

MAX_NAME = 200
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def encode_project_dir(cwd: str) -> str:
    units = _utf16_units(cwd)
    name = "".join(chr(u) if _is_ascii_alnum(u) else "-" for u in units)
    if len(name) <= MAX_NAME:
        return name
    return f"{name[:MAX_NAME]}-{_base36(abs(_java_hash(units)))}"


def _utf16_units(text: str) -> list[int]:
    """The UTF-16 code units of `text` (a lone surrogate as itself), computed rather than encoded:
    looking up the `utf-16-le` codec imports a module, in every post-commit hook."""
    units: list[int] = []
    for char in text:
        code = ord(char)
        if code > 0xFFFF:
            code -= 0x10000
            units += (0xD800 | (code >> 10), 0xDC00 | (code & 0x3FF))
        else:
            units.append(code)
    return units


def _is_ascii_alnum(unit: int) -> bool:
    return 48 <= unit <= 57 or 65 <= unit <= 90 or 97 <= unit <= 122


def _java_hash(units: list[int]) -> int:
    """`h = (h << 5) - h + c | 0` over the code units: a signed 32-bit result."""
    value = 0
    for unit in units:
        value = (value * 31 + unit) & 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _base36(number: int) -> str:
    if number == 0:
        return "0"
    digits = []
    while number:
        number, rest = divmod(number, 36)
        digits.append(_DIGITS[rest])
    return "".join(reversed(digits))


def project_dir(cwd: str) -> str:
    return os.path.join(claude_dir(), "projects", encode_project_dir(cwd))


def is_agent_file(name: str) -> bool:
    return name.startswith(SUBAGENT_PREFIX) and name.endswith(SUFFIX)


def is_session_file(name: str) -> bool:
    return name.endswith(SUFFIX) and not is_agent_file(name)


def project_dirs(trees: list[str]) -> list[tuple[str, str]]:
    """(directory, name) under projects/ whose name may hold sessions of `trees` (the encoding is
    lossy: a recorded cwd decides later)."""
    root = os.path.join(claude_dir(), "projects")
    prefixes = [encode_project_dir(tree) for tree in trees]
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    return [(os.path.join(root, n), n) for n in names if any(n == p or n.startswith(p + "-") for p in prefixes)]


def recent_files(trees: list[str], since: float) -> list[str]:
    """Main transcripts of sessions held in one of `trees` (or below) written at/after `since`,
    newest first."""
    from sessionledger.core.sessionfiles import newer_files

    found = []
    for directory, _ in project_dirs(trees):
        found += newer_files(directory, since, is_session_file)
    return [path for _, path in sorted(found, reverse=True)]


def hook_installed(project_dir: str) -> bool:
    """Is our PostToolUse hook installed for `project_dir` (personal or team settings)?"""
    files = (
        os.path.join(project_dir, ".claude", "settings.json"),
        os.path.join(project_dir, ".claude", "settings.local.json"),
        os.path.join(claude_dir(), "settings.json"),
    )
    return any(b" hook post-tool-use" in read_head(path, 1 << 20) for path in files)


def session_id(path: str) -> str:
    """The session id a transcript file is named after."""
    name = os.path.basename(path)
    return name[: -len(SUFFIX)] if name.endswith(SUFFIX) else name


def is_transcript(path: str) -> bool:
    """A file under Claude Code's `projects/`, which holds no other agent's files: a capture of it
    needs no adapter (the hook imports none)."""
    return path.startswith(os.path.join(claude_dir(), "projects", ""))


def subagent_files(transcript: str) -> list[tuple[str, str]]:
    """(agent id, path) of a session's sub-agent transcripts, in both layouts:
    `<session>/subagents/agent-<id>.jsonl` (2.1.2+), and before that `agent-<id>.jsonl` beside the
    session file, shared by the project's sessions: a file is this session's when its lines carry
    its `sessionId`."""
    stem = session_id(transcript)
    directory = os.path.join(os.path.dirname(transcript), stem, "subagents")
    found = [(_agent_id(name), os.path.join(directory, name)) for name in _agent_names(directory)]
    legacy = os.path.dirname(transcript)
    marker = b'"sessionId":"' + stem.encode("utf-8", "surrogateescape") + b'"'
    for name in _agent_names(legacy):
        path = os.path.join(legacy, name)
        if marker in read_head(path, 65536):
            found.append((_agent_id(name), path))
    return found


def read_head(path: str, limit: int = 1 << 20) -> bytes:
    """The first `limit` bytes of a file; empty when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return handle.read(limit)
    except OSError:
        return b""


def _agent_names(directory: str) -> list[str]:
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    return [name for name in names if is_agent_file(name)]


def _agent_id(name: str) -> str:
    return name[len(SUBAGENT_PREFIX) : -len(SUFFIX)]


SYSTEM_REMINDER = "<system-reminder>"  # opens context Claude Code injects into the conversation (hooks, todos)

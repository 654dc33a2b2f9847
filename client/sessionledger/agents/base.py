"""What every agent adapter offers, with the defaults most agents share.

An adapter owns everything that depends on which coding agent wrote a conversation: where its
transcripts live and which one is active for a repository, its transcript format (parse, turns,
cuts, slimming: `formats/<agent>.py`), reading a turn's prompt, finding the shell calls that made
a commit (import), recognising tool output (fit), writing a conversation back so the agent can
resume it (fork, restore), its hook events, and the roles and kinds its messages use.

The rest of the client, the server, the UI and the MCP server ask an adapter; none of them reads
an agent's raw records (tests/client/test_agents.py enforces it). Where an agent's sessions live
is its layout module's (`core/<agent>_layout.py`): the hooks ask those and import no adapter.
Module level is `os` only all the same, and everything heavier is imported inside the method
that needs it.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing would slow every hook
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from sessionledger.core.formats.base import TranscriptFormat
    from sessionledger.core.formats.resume import ResumeReport

    Changed = Callable[[int], bool | None]

APPEND, SNAPSHOT = "append", "snapshot"
_GIT_COMMIT = r"\bgit\b[^;&|\n]*?\bcommit\b"
_MESSAGE = r"""-m\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+))"""
_TIMESTAMP = rb'"timestamp":\s?"([^"\\]{1,64})"'


class Call:
    """A shell call that ran `git commit`: when it was made and answered, where its answer ends."""

    __slots__ = ("answered_at", "branch", "end", "message", "used_at")

    def __init__(self, used_at: float, answered_at: float, end: int, message: str | None, branch: str) -> None:
        self.used_at, self.answered_at, self.end, self.message, self.branch = used_at, answered_at, end, message, branch

    def __repr__(self) -> str:
        return f"Call({self.used_at}, {self.answered_at}, end={self.end}, message={self.message!r})"


class Resumable:
    """A conversation written back as a session file the agent can resume."""

    def __init__(self, path: str, cwd: str, command: list[str]) -> None:
        self.path, self.cwd, self.command = path, cwd, command
        self.files: list[str] = []  # written beside it (sub-agents, saved tool outputs)
        self.notes: list[str] = []  # what was changed on the way, for the user
        self.unchanged = False  # the file was already there with these very bytes: nothing written


class ResumeRequest:
    """What writing a conversation back needs (`Agent.write_resumable`): its bytes (`raw`), the new
    session id and the captured one (`old_id`), the directory it resumes in (`cwd`), the directory its
    recorded paths move out of (`cwd_from`) and into (`cwd_to`, default `cwd`), which lines were changed
    since (`changed`), how to fetch the captured sub-agent files (`fetch`, `listing`), the session it
    forks (`forked_from`), whether an existing file of that id may be replaced, and the whole recording
    the bytes were cut from (`recording`: an adapter keeps the form it was recorded in)."""

    def __init__(
        self,
        raw: bytes,
        *,
        session_id: str,
        old_id: str,
        cwd: str,
        cwd_from: str | None,
        changed: Changed | None,
        fetch: Callable[[str], bytes],
        listing: dict[str, Any],
        cwd_to: str | None = None,
        forked_from: str | None = None,
        replace: bool = True,
        recording: bytes | None = None,
    ) -> None:
        self.raw, self.session_id, self.old_id, self.cwd = raw, session_id, old_id, cwd
        self.cwd_from, self.changed, self.fetch, self.listing = cwd_from, changed, fetch, listing
        self.cwd_to, self.forked_from, self.replace = cwd_to or cwd, forked_from, replace
        self.recording = recording


class CannotResume(Exception):
    """This agent cannot continue a written-back conversation; the message says why and what to do."""


class Agent:
    """The defaults; each agent module subclasses this and sets what differs."""

    name = ""  # the ingest `agent` value and the format's name
    display_name = ""
    executable = ""  # the command that resumes a session
    # the agent's hook event -> our handler (`sessionledger hook <handler>`)
    hook_events: Mapping[str, str] = {}
    # the environment variable the agent sets for the shell commands it runs, if any
    shell_marker = ""
    # the `tool_name`s its after-tool hook gives shell commands (`tool_input.command`)
    shell_tools: frozenset[str] = frozenset()

    @property
    def roles(self) -> frozenset[str]:
        """The roles its messages use: all of the shared ones (formats/base.py `ROLES`)."""
        from sessionledger.core.formats.base import ROLES

        return frozenset(ROLES)

    @property
    def kinds(self) -> frozenset[str]:
        """The kinds its messages use: all of the shared ones (formats/base.py `KINDS`)."""
        from sessionledger.core.formats.base import KINDS

        return frozenset(KINDS)

    @property
    def format(self) -> TranscriptFormat:
        from sessionledger.core.formats import get_format

        return get_format(self.name)

    # --- where the transcripts are ------------------------------------------------------------

    def recent_files(self, trees: list[str], since: float) -> list[str]:
        """Main transcripts of sessions held in one of `trees` (or below) written at/after `since`.

        The post-commit hook's question: keep it to directory listings and bounded reads."""
        return []

    def session_files(self, trees: list[str]) -> list[tuple[str, str]]:
        """(transcript, recorded cwd) of every session held in one of `trees` (import)."""
        return []

    def find_current(self, cwd: str) -> str | None:
        """The most recently written transcript of a session run in `cwd` (or below)."""
        found = self.recent_files([os.path.abspath(cwd)], 0)
        return found[0] if found else None

    def named_by_environment(self) -> bool:
        """Did the agent name the current session in our environment (we run inside it)?"""
        return False

    def find_by_session(self, session_id: str) -> str | None:
        """The transcript of one of this agent's session ids, if it is on this machine."""
        return None

    def owns(self, path: str) -> bool:
        """Is `path` a main transcript of this agent (by where it is and how it is named)?"""
        return False

    def session_id(self, path: str) -> str:
        """The agent's id of the session a transcript file holds."""
        name = os.path.basename(path)
        return name.rsplit(".", 1)[0]

    def subagent_files(self, transcript: str) -> list[tuple[str, str]]:
        """(agent id, path) of the session's sub-agent transcripts captured with it."""
        return []

    def layout_path(self, transcript: str, path: str) -> str:
        """Where a sub-agent file sits relative to its session (kept on the server)."""
        return os.path.basename(path)

    def tool_outputs_dir(self, transcript: str) -> str | None:
        """Where the agent saves tool outputs too large for the transcript (None: it does not)."""
        return None

    def capture_mode(self, path: str) -> str:
        """APPEND: the file only grows, so byte ranges partition it; SNAPSHOT: it is rewritten
        whole, so each capture takes the whole file."""
        return APPEND

    # --- reading -------------------------------------------------------------------------------

    def turn_prompts(self, raw: bytes, starts: list[int]) -> list[tuple[str, str | None]]:
        """(prompt text, timestamp) of the turn starting at each of `starts` (line offsets)."""
        ends = [*starts[1:], len(raw)]
        found = []
        for start, end in zip(starts, ends, strict=True):
            parsed = self.format.parse(raw[start:end])
            prompt = next((m for m in parsed.messages if m.get("kind") == "prompt"), None)
            found.append((str(prompt.get("content") or ""), prompt.get("timestamp")) if prompt else ("", None))
        return found

    def commit_calls(self, raw: bytes) -> list[Call]:
        """Shell calls that ran `git commit`, in the order they were answered, each with where
        the line holding its answer ends. From the content document: a `Bash` call (the tool
        mapping's name for every shell tool) and its result; a result whose line cannot be
        found (a format without line offsets) is left out."""
        from sessionledger.transcripts import iso_to_epoch

        git_commit = _compiled(_GIT_COMMIT)
        parsed = self.format.parse(raw)
        ends = self.answer_ends(raw)
        pending: dict[str, tuple[float, str | None]] = {}
        calls = []
        for msg in parsed.messages:
            tool = msg.get("tool") or {}
            stamp = iso_to_epoch(msg["timestamp"]) if isinstance(msg.get("timestamp"), str) else None
            if msg.get("kind") == "tool_use" and tool.get("name") == "Bash" and stamp is not None:
                command = (tool.get("input") or {}).get("command")
                if isinstance(command, str) and git_commit.search(command) and isinstance(tool.get("id"), str):
                    pending[tool["id"]] = (stamp, commit_message(command))
            elif msg.get("kind") == "tool_result" and tool.get("id") in pending and stamp is not None:
                end = ends.get(tool["id"])
                if end is not None:
                    used, message = pending.pop(tool["id"])
                    calls.append(Call(used, stamp, end, message, self.branch_of(raw)))
        return calls

    def answer_ends(self, raw: bytes) -> dict[str, int]:
        """Tool call id -> where the line that first answers it ends ({}: the format has no
        line to cut after)."""
        return {}

    def time_span(self, raw: bytes) -> tuple[float | None, float | None]:
        """Epoch seconds of the first and last timestamp in the bytes."""
        from sessionledger.transcripts import iso_to_epoch

        first = last = None
        for match in _compiled(_TIMESTAMP).finditer(raw):
            when = iso_to_epoch(match.group(1).decode("ascii", "replace"))
            if when is not None:
                first = when if first is None else min(first, when)
                last = when if last is None else max(last, when)
        return first, last

    def branch_of(self, raw: bytes) -> str:
        """The git branch the session last recorded ("" when the agent records none)."""
        return ""

    def first_cwd(self, raw: bytes) -> str | None:
        """The working directory the conversation was started in, when the transcript says."""
        return None

    def version_of(self, raw: bytes) -> str:
        """The agent's version as the transcript records it ("" when it does not)."""
        parsed_version = self.format.parse(raw[: 1 << 20][: raw[: 1 << 20].rfind(b"\n") + 1]).agent_version
        return (parsed_version or "")[:32]

    def cutter(self, raw: bytes) -> Any:
        """An object whose `end(position)` is where a cut of `raw` at `position` ends (tool calls
        kept with their results); cuts at many points of one transcript share its index."""
        return _FormatCutter(self, raw)

    # --- fit: which strings of a record are tool output or base64 payloads --------------------

    def is_output(self, node: dict[str, Any], key: Any) -> bool:
        """Is `node[key]` (and everything inside it) output of a tool, which fit may shorten?"""
        return False

    def is_base64(self, node: dict[str, Any], key: Any) -> bool:
        """Is the string `node[key]` an inline binary payload (dropped whole by fit)?"""
        return False

    # --- writing back ----------------------------------------------------------------------------

    def cannot_resume(self, raw: bytes) -> str | None:
        """Why this conversation cannot be written back for the agent to resume (None: it can)."""
        return None

    def write_resumable(self, request: ResumeRequest) -> tuple[Resumable, ResumeReport]:
        raise CannotResume(f"{self.display_name} sessions cannot be written back to be resumed")

    def resume_command(self, session_id: str) -> list[str]:
        return [self.executable, "--resume", session_id]

    # --- hooks -----------------------------------------------------------------------------------

    def hook_installed(self, project_dir: str, home: str) -> bool:
        """Are this agent's own tool hooks of ours installed for `project_dir`? (Then a commit made
        by the agent's shell tool is captured by that hook, with its result line.)"""
        return False

    def hook_settings(self, project_dir: str | None) -> str | None:
        """The settings file `init --agent <name>` writes the agent's hooks into (None: `init`
        does not install this agent's hooks; the git post-commit hook covers it)."""
        return None

    def merge_hooks(self, settings: dict[str, Any], command_for: Callable[[str], str]) -> None:
        """Add (or update in place) our handlers of `hook_events` in the agent's settings object."""
        raise NotImplementedError

    def hooks_off(self, settings: dict[str, Any]) -> str | None:
        """Why hooks written into these settings would not run (a switch turned off), if so."""
        return None


class _FormatCutter:
    def __init__(self, agent: Agent, raw: bytes) -> None:
        self.agent, self.raw = agent, raw

    def end(self, position: int) -> int:
        return len(self.agent.format.cut_at(self.raw, position))


def commit_message(command: str) -> str | None:
    """The first line of `git commit -m …`'s message, when the command gives one."""
    match = _compiled(_MESSAGE).search(command)
    if not match:
        return None
    text = next(g for g in match.groups() if g is not None)
    return text.replace('\\"', '"').strip().splitlines()[0] if text.strip() else None


def is_git_commit(command: str) -> bool:
    return bool(_compiled(_GIT_COMMIT).search(command))


def _compiled(pattern: str | bytes) -> Any:
    import re  # re.compile caches: compiled once per process

    return re.compile(pattern)

"""Claude Code: `~/.claude/projects/<encoded cwd>/<session id>.jsonl`, append-only JSONL, its
sub-agents in `<session>/subagents/` (older versions: `agent-<id>.jsonl` beside the session), its
hooks in `.claude/settings*.json`, resumed with `claude -r <id>` (docs/client.md, docs/agents.md).
"""

from __future__ import annotations

import os

from sessionledger.agents.base import Agent, Call, CannotResume, Resumable, commit_message, is_git_commit
from sessionledger.core import claude_layout
from sessionledger.core.claude_layout import (
    AGENT_NAME,
    SHELL_MARKER,
    SUFFIX,
    claude_dir,
    is_session_file,
    project_dir,
    read_head,
    session_id,
    subagent_files,
)
from sessionledger.core.sessionfiles import inside, newer_files

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from sessionledger.agents.base import ResumeRequest
    from sessionledger.core.formats.resume import ResumeReport


class ClaudeCode(Agent):
    name = AGENT_NAME
    display_name = "Claude Code"
    executable = "claude"
    # (Claude Code event, matcher, our handler): what `init` installs (`hookinstall`)
    hooks = (
        ("PostToolUse", "Bash", "post-tool-use"),
        # A Bash call that fails (`git commit -m x && false`) fires this instead of PostToolUse.
        ("PostToolUseFailure", "Bash", "post-tool-use-failure"),
        ("SessionStart", "startup|resume|clear|compact|fork", "session-start"),  # `fork`: 2.1.214+
        ("SessionEnd", None, "session-end"),  # every reason: `clear` → kind clear, others → end
    )
    hook_events = {event: handler for event, _, handler in hooks}
    shell_marker = SHELL_MARKER
    shell_tools = frozenset({"Bash"})

    # --- where the transcripts are ----------------------------------------------------------

    def recent_files(self, trees: list[str], since: float) -> list[str]:
        return claude_layout.recent_files(trees, since)

    def session_files(self, trees: list[str]) -> list[tuple[str, str]]:
        found = []
        for directory, _ in claude_layout.project_dirs(trees):
            for path in sorted(p for _, p in newer_files(directory, 0, is_session_file)):
                cwd = self.first_cwd(read_head(path))
                if cwd and inside(cwd, trees):
                    found.append((path, cwd))
        return found

    def owns(self, path: str) -> bool:
        return is_session_file(os.path.basename(path)) and "projects" in path.split(os.sep)

    def session_id(self, path: str) -> str:
        return session_id(path)

    def find_by_session(self, session_id: str) -> str | None:
        """The transcript of a session id, in any project directory."""
        root = os.path.join(claude_dir(), "projects")
        try:
            projects = os.listdir(root)
        except OSError:
            return None
        for name in projects:
            candidate = os.path.join(root, name, session_id + SUFFIX)
            if os.path.isfile(candidate):
                return candidate
        return None

    def find_current(self, cwd: str) -> str | None:
        """Inside Claude Code, Bash commands see `CLAUDE_CODE_SESSION_ID` (2.1.132+); otherwise the
        most recently written transcript of the directory's project (or of its parents)."""
        session = os.environ.get("CLAUDE_CODE_SESSION_ID")
        if session and (found := self.find_by_session(session)):
            return found
        directory = os.path.abspath(cwd)
        while True:
            newest = newer_files(project_dir(directory), 0, is_session_file)
            if newest or os.path.dirname(directory) == directory:
                return max(newest)[1] if newest else None
            directory = os.path.dirname(directory)

    def named_by_environment(self) -> bool:
        return bool(os.environ.get("CLAUDE_CODE_SESSION_ID"))

    def subagent_files(self, transcript: str) -> list[tuple[str, str]]:
        return subagent_files(transcript)

    def layout_path(self, transcript: str, path: str) -> str:
        name = os.path.basename(path)
        return name if os.path.dirname(path) == os.path.dirname(transcript) else f"subagents/{name}"

    def tool_outputs_dir(self, transcript: str) -> str:
        """Where Claude Code (2.1.2+) saves large tool outputs its results point at."""
        from sessionledger.core.formats.persisted import DIRECTORY

        return os.path.join(os.path.dirname(transcript), self.session_id(transcript), DIRECTORY)

    # --- reading -----------------------------------------------------------------------------

    def turn_prompts(self, raw: bytes, starts: list[int]) -> list[tuple[str, str | None]]:
        from sessionledger.core.formats.base import iter_lines, load_record
        from sessionledger.core.formats.classify import block_text, is_prompt_record, render_prompt, user_content

        ends = [*starts[1:], len(raw)]
        found: list[tuple[str, str | None]] = []
        for start, end in zip(starts, ends, strict=True):
            prompt: tuple[str, str | None] = ("", None)
            for _, line in iter_lines(raw[start:end]):
                rec = load_record(line) if b'"user"' in line else None
                if rec and is_prompt_record(rec):
                    text, _ = render_prompt(block_text(user_content(rec)))
                    if not text.strip() and isinstance(user_content(rec), list):
                        text = "[image]"
                    stamp = rec.get("timestamp")
                    prompt = (text, stamp if isinstance(stamp, str) else None)
                    break
            found.append(prompt)
        return found

    def cutter(self, raw: bytes) -> Any:
        from sessionledger.core.formats.steps import Cutter

        return Cutter(raw)

    def commit_calls(self, raw: bytes) -> list[Call]:
        """Main-conversation Bash calls that ran `git commit`, cut after their tool_result line."""
        from sessionledger.core.formats.base import iter_lines

        pending: dict[str, tuple[float, str | None, str]] = {}
        calls: list[Call] = []
        for offset, line in iter_lines(raw):
            if b'"tool_use"' in line and b'"Bash"' in line:
                _note_use(line, pending)
            elif b'"tool_result"' in line and pending:
                calls += _answers(line, offset, pending)
        return calls

    def branch_of(self, raw: bytes) -> str:
        import re

        for match in reversed(list(re.finditer(rb'"gitBranch":"([^"]*)"', raw[-(1 << 20) :]))):
            return match.group(1).decode("utf-8", "replace")
        return ""

    def first_cwd(self, raw: bytes) -> str | None:
        from sessionledger.core.formats.resume import first_cwd

        return first_cwd(raw)

    def version_of(self, raw: bytes) -> str:
        """`version` is on every line: the first line that names it."""
        from sessionledger.core.formats.base import load_record

        for line in raw.split(b"\n", 200)[:200]:
            if b'"version"' not in line:
                continue
            record = load_record(line)
            if record and isinstance(record.get("version"), str):
                return str(record["version"])[:32]
        return ""

    # --- fit ----------------------------------------------------------------------------------

    def is_output(self, node: dict[str, Any], key: Any) -> bool:
        return key == "toolUseResult" or (key == "content" and node.get("type") == "tool_result")

    def is_base64(self, node: dict[str, Any], key: Any) -> bool:
        """API image/document sources ({"type": "base64", "data": …}) and Read's `file.base64`."""
        return (key == "data" and node.get("type") == "base64") or key == "base64"

    # --- writing back -------------------------------------------------------------------------

    def write_resumable(self, request: ResumeRequest) -> tuple[Resumable, ResumeReport]:
        """`<claude dir>/projects/<encoded cwd>/<id>.jsonl` with its sub-agents and saved tool
        outputs; tool calls the capture ended on are answered by a note so `claude -r` loads it.
        `cwd` values under `cwd_from` move under `cwd_to` (default: `cwd`, where it resumes)."""
        from sessionledger.agents import claude_files as sessionfiles
        from sessionledger.core.formats.resume import rewrite_for_resume

        r = request
        data, report = rewrite_for_resume(
            r.raw, session_id=r.session_id, cwd_from=r.cwd_from, cwd_to=r.cwd_to, changed=r.changed
        )
        data, closed = sessionfiles.finish(data, r.old_id, r.cwd, r.session_id)
        target = self.session_path(r.cwd, r.session_id)
        if os.path.exists(target):
            if _read_all(target) == data:
                same = Resumable(target, r.cwd, self.resume_command(r.session_id))
                same.unchanged = True
                return same, report
            if not r.replace:
                raise CannotResume(f"{target} exists (Claude Code still has this session); --force replaces it")
        written = sessionfiles.write_all(
            r.fetch,
            r.listing,
            cwd=r.cwd,
            session_id=r.session_id,
            data=data,
            rewrite=sessionfiles.subagent_rewriter(r.session_id, r.old_id, r.cwd, r.cwd_from),
        )
        result = Resumable(written.session, r.cwd, self.resume_command(r.session_id))
        result.files = written.files
        if closed:
            result.notes.append(
                f"answered {closed} tool call(s) the capture ended on (their result was never captured)"
            )
        for name in written.moved_agents:
            result.notes.append(
                f"{name} went into {r.session_id}/subagents/: the original's file of that name is still there"
            )
        return result, report

    def session_path(self, cwd: str, session_id: str) -> str:
        return os.path.join(project_dir(cwd), session_id + SUFFIX)

    def resume_command(self, session_id: str) -> list[str]:
        return ["claude", "-r", session_id]

    # --- hooks --------------------------------------------------------------------------------

    def hook_installed(self, project_dir: str, home: str) -> bool:
        return claude_layout.hook_installed(project_dir)


AGENT = ClaudeCode()


def _read_all(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _note_use(line: bytes, pending: dict[str, tuple[float, str | None, str]]) -> None:
    from sessionledger.core.formats.base import load_record

    rec = load_record(line)
    if not rec or rec["type"] != "assistant" or rec.get("isSidechain") is True:
        return
    when = _stamp(rec)
    for block in _blocks(rec):
        command = (block.get("input") or {}).get("command") if block.get("type") == "tool_use" else None
        is_commit = block.get("name") == "Bash" and isinstance(command, str) and is_git_commit(command)
        if is_commit and when is not None and isinstance(block.get("id"), str):
            pending[block["id"]] = (when, commit_message(str(command)), str(rec.get("gitBranch") or ""))


def _answers(line: bytes, offset: int, pending: dict[str, tuple[float, str | None, str]]) -> list[Call]:
    from sessionledger.core.formats.base import load_record

    rec = load_record(line)
    when = _stamp(rec) if rec else None
    calls = []
    for block in _blocks(rec) if rec and when is not None else []:
        key = block.get("tool_use_id")
        used = pending.pop(key, None) if block.get("type") == "tool_result" and isinstance(key, str) else None
        if used is not None and when is not None:
            calls.append(Call(used[0], when, offset + len(line), used[1], used[2]))
    return calls


def _blocks(rec: dict[str, Any]) -> list[dict[str, Any]]:
    message = rec.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _stamp(rec: dict[str, Any]) -> float | None:
    from sessionledger.transcripts import iso_to_epoch

    stamp = rec.get("timestamp")
    return iso_to_epoch(stamp) if isinstance(stamp, str) else None

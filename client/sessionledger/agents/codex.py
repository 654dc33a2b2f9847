"""OpenAI Codex CLI: rollouts `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<thread id>.jsonl`
(append-only JSONL, the first line `session_meta` names the session's cwd), resumed with
`codex resume <id>`; format and sources in docs/agents.md "Codex CLI".
"""

from __future__ import annotations

import os

from sessionledger.agents.base import Agent, Resumable
from sessionledger.core import codex_layout
from sessionledger.core.codex_layout import codex_home, is_rollout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from sessionledger.agents.base import ResumeRequest
    from sessionledger.core.formats.resume import ResumeReport

_FIRST_LINE_LIMIT = 8 * 1024 * 1024  # the first line carries the whole system prompt
_OUTPUT_TYPES = ("function_call_output", "custom_tool_call_output")
_EXEC_OUTPUT_KEYS = ("aggregated_output", "formatted_output", "stdout", "stderr")


class Codex(Agent):
    name = "codex"
    display_name = "Codex CLI"
    executable = "codex"
    # hooks.json (0.139+, `codex_hooks` before) is not written by `init`: the git post-commit hook
    # covers every version (docs/agents.md "Hooks"); `hook post-tool-use` accepts the payload.
    hook_events = {"PostToolUse": "post-tool-use"}
    # Claude Code's name for its shell tool, and the names of Codex's own shell tools
    shell_tools = frozenset({"Bash", "shell", "exec_command", "shell_command", "local_shell"})

    # --- where the transcripts are ----------------------------------------------------------

    def recent_files(self, trees: list[str], since: float) -> list[str]:
        return codex_layout.recent_files(trees, since)

    def session_files(self, trees: list[str]) -> list[tuple[str, str]]:
        from pathlib import Path

        from sessionledger.core.formats.locate import codex_sessions

        found: dict[str, str] = {}
        for tree in trees:
            for session in codex_sessions(tree, home=Path(codex_home()), days=3660):
                found.setdefault(str(session.path), session.cwd)
        return sorted(found.items())

    def owns(self, path: str) -> bool:
        return is_rollout(os.path.basename(path))

    def cwd_of(self, path: str) -> str | None:
        return codex_layout.cwd_of(path)

    def session_id(self, path: str) -> str:
        meta = codex_layout.meta(path)
        if meta:
            return meta[0]
        stem = os.path.basename(path)[: -len(".jsonl")]
        return stem[-36:] if len(stem) >= 36 else stem  # the thread id ends the file name

    def find_by_session(self, session_id: str) -> str | None:
        root = os.path.join(codex_home(), "sessions")
        for directory, _, names in os.walk(root):
            for name in names:
                if is_rollout(name) and name.endswith(f"-{session_id}.jsonl"):
                    return os.path.join(directory, name)
        return None

    # --- reading -----------------------------------------------------------------------------

    def answer_ends(self, raw: bytes) -> dict[str, int]:
        from sessionledger.core.formats.codex import answer_ends

        return answer_ends(raw)

    def branch_of(self, raw: bytes) -> str:
        parsed = self.format.parse(raw[: raw.find(b"\n") + 1])  # session_meta: the git state at start
        git = (parsed.stats.get("session") or {}).get("git") or {}
        return str(git.get("branch") or "")

    def first_cwd(self, raw: bytes) -> str | None:
        parsed = self.format.parse(raw[: raw.find(b"\n") + 1])
        cwd = (parsed.stats.get("session") or {}).get("cwd")
        return cwd if isinstance(cwd, str) and cwd else None

    def version_of(self, raw: bytes) -> str:
        parsed = self.format.parse(raw[: raw.find(b"\n") + 1])
        return (parsed.agent_version or "")[:32]

    # --- fit ----------------------------------------------------------------------------------

    def is_output(self, node: dict[str, Any], key: Any) -> bool:
        kind = node.get("type")
        return (key == "output" and kind in _OUTPUT_TYPES) or (key in _EXEC_OUTPUT_KEYS and kind == "exec_command_end")

    def is_base64(self, node: dict[str, Any], key: Any) -> bool:
        value = node.get(key) if key == "image_url" else None
        return isinstance(value, str) and value.startswith("data:") and ";base64," in value[:100]

    # --- writing back -------------------------------------------------------------------------

    def write_resumable(self, request: ResumeRequest) -> tuple[Resumable, ResumeReport]:
        """A rollout under a new thread id in today's date folder: `session_meta.id` rewritten
        (and `forked_from_id` set when forking), cwd values moved like Claude Code's, the key
        `slim` adds removed. Codex replays what it reads verbatim, so nothing else changes."""
        import time

        from sessionledger.core.formats.resume import ResumeReport
        from sessionledger.fsutil import atomic_write

        r = request
        report = ResumeReport()
        out = [
            _rewrite_line(line, r.session_id, r.cwd_from, r.cwd_to, r.forked_from)
            for line in r.raw.splitlines(keepends=True)
        ]
        stamp = time.strftime("%Y-%m-%dT%H-%M-%S")
        folder = os.path.join(codex_home(), "sessions", *time.strftime("%Y/%m/%d").split("/"))
        os.makedirs(folder, mode=0o700, exist_ok=True)
        path = os.path.join(folder, f"rollout-{stamp}-{r.session_id}.jsonl")
        atomic_write(path, b"".join(out), mode=0o600)
        result = Resumable(path, r.cwd, self.resume_command(r.session_id))
        if os.path.exists(os.path.join(codex_home(), "state_5.sqlite")):
            result.notes.append(
                "this Codex keeps a thread index (state_5.sqlite): versions from 0.142 resume only threads "
                'in it, and a rollout written by another program is not (docs/agents.md "Resume, fork, restore")'
            )
        return result, report

    def resume_command(self, session_id: str) -> list[str]:
        return ["codex", "resume", session_id]


AGENT = Codex()


def _rewrite_line(line: bytes, session_id: str, cwd_from: str | None, cwd_to: str, forked_from: str | None) -> bytes:
    import json

    from sessionledger.core.formats.jsonlines import dump_line

    if b'"session_meta"' not in line and b'"cwd"' not in line and b"sessionledger_line_id" not in line:
        return line
    try:
        rec = json.loads(line)
    except (ValueError, RecursionError):
        return line
    if not isinstance(rec, dict):
        return line
    rec.pop("sessionledger_line_id", None)
    payload = found if isinstance(found := rec.get("payload"), dict) else None
    if payload is not None and rec.get("type") == "session_meta":
        payload["id"] = session_id
        if forked_from:
            payload["forked_from_id"] = forked_from
    if payload is not None and isinstance(payload.get("cwd"), str) and cwd_from:
        old = payload["cwd"]
        if old == cwd_from or old.startswith(cwd_from.rstrip("/") + "/"):
            payload["cwd"] = cwd_to + old[len(cwd_from) :]
    return dump_line(rec, line)

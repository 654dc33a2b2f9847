"""Gemini CLI: chat recordings `~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl` (v0.39+,
append-only JSONL) or `.json` (older: one JSON document rewritten whole on every change, so it is
captured as a whole-file snapshot each time), resumed with `gemini --resume <id>`; format and
sources in docs/agents.md "Gemini CLI".
"""

from __future__ import annotations

import os

from sessionledger.agents.base import APPEND, SNAPSHOT, Agent, Resumable
from sessionledger.core import gemini_layout
from sessionledger.core.gemini_layout import gemini_dir, is_chat
from sessionledger.core.sessionfiles import newer_files

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from sessionledger.agents.base import ResumeRequest
    from sessionledger.core.formats.resume import ResumeReport


class Gemini(Agent):
    name = "gemini"
    display_name = "Gemini CLI"
    executable = "gemini"
    hook_events = {"AfterTool": "post-tool-use", "SessionEnd": "session-end"}
    shell_tools = frozenset({"run_shell_command"})
    shell_marker = gemini_layout.SHELL_MARKER

    # --- where the transcripts are ----------------------------------------------------------

    def recent_files(self, trees: list[str], since: float) -> list[str]:
        return gemini_layout.recent_files(trees, since)

    def session_files(self, trees: list[str]) -> list[tuple[str, str]]:
        found = []
        for chats, tree in gemini_layout.chat_dirs(trees):
            found += [(path, tree) for _, path in sorted(newer_files(chats, 0, is_chat))]
        return found

    def owns(self, path: str) -> bool:
        return is_chat(os.path.basename(path)) and os.path.basename(os.path.dirname(path)) == "chats"

    def session_id(self, path: str) -> str:
        from pathlib import Path

        from sessionledger.core.formats.locate import gemini_session_id

        found = gemini_session_id(Path(path))
        return found or os.path.basename(path).rsplit(".", 1)[0]

    def capture_mode(self, path: str) -> str:
        return SNAPSHOT if path.endswith(".json") else APPEND

    # --- reading -----------------------------------------------------------------------------

    def turn_prompts(self, raw: bytes, starts: list[int]) -> list[tuple[str, str | None]]:
        from sessionledger.core.formats.gemini_replay import legacy_document

        if legacy_document(raw) is None:
            return super().turn_prompts(raw, starts)
        prompts = [m for m in self.format.parse(raw).messages if m.get("kind") == "prompt"]
        found = [(str(m.get("content") or ""), m.get("timestamp")) for m in prompts[: len(starts)]]
        return found + [("", None)] * (len(starts) - len(found))

    def answer_ends(self, raw: bytes) -> dict[str, int]:
        from sessionledger.core.formats.gemini import answer_ends

        return answer_ends(raw)

    def first_cwd(self, raw: bytes) -> str | None:
        """The recording names its project only by hash (and `directories`): unknown."""
        return None

    def version_of(self, raw: bytes) -> str:
        return ""  # Gemini CLI does not record its version

    # --- fit ----------------------------------------------------------------------------------

    def is_output(self, node: dict[str, Any], key: Any) -> bool:
        """A tool call's `result`/`resultDisplay`, a functionResponse's `response`."""
        if key in ("result", "resultDisplay"):
            return "args" in node or "status" in node
        return key == "response" and "name" in node

    def is_base64(self, node: dict[str, Any], key: Any) -> bool:
        return key == "data" and isinstance(node.get("mimeType"), str)

    # --- writing back -------------------------------------------------------------------------

    def write_resumable(self, request: ResumeRequest) -> tuple[Resumable, ResumeReport]:
        """The recording under a new session id, in the project folder of `cwd`: the one Gemini
        registered for it, else the SHA-256 folder older versions use and newer ones migrate on
        first use. A whole pre-v0.39 document stays a `.json` document (every version resumes
        it; v0.39+ migrates it), and so does a cut of one (a fork), which the format hands back as
        the JSONL v0.39+ migrates it to: the CLI that recorded it reads only documents. Anything
        else is JSONL (v0.39+ only)."""
        import time
        from pathlib import Path

        from sessionledger.core.formats.gemini_replay import legacy_document
        from sessionledger.core.formats.locate import gemini_project_dirs, project_hash
        from sessionledger.core.formats.resume import ResumeReport
        from sessionledger.fsutil import atomic_write

        r = request
        doc = legacy_document(r.raw)
        if doc is None and r.recording is not None and legacy_document(r.recording) is not None:
            doc = _document_of(r.raw)
        if doc is not None:
            doc.update(sessionId=r.session_id, projectHash=project_hash(r.cwd))
            data, suffix = json_document(doc), ".json"
        else:
            data, suffix = _as_jsonl(r.raw, r.session_id, project_hash(r.cwd)), ".jsonl"
        folders = gemini_project_dirs(r.cwd, gemini=Path(gemini_dir()))
        folder = str(folders[0]) if folders else os.path.join(gemini_dir(), "tmp", project_hash(r.cwd))
        chats = os.path.join(folder, "chats")
        os.makedirs(chats, mode=0o700, exist_ok=True)
        path = os.path.join(chats, f"session-{time.strftime('%Y-%m-%dT%H-%M')}-{r.session_id[:8]}{suffix}")
        atomic_write(path, data, mode=0o600)
        return Resumable(path, r.cwd, self.resume_command(r.session_id)), ResumeReport()

    def resume_command(self, session_id: str) -> list[str]:
        return ["gemini", "--resume", session_id]

    # --- hooks (v0.21+; on by default since `hooksConfig.enabled`) --------------------------------

    def hook_settings(self, project_dir: str | None) -> str | None:
        """The project's `.gemini/settings.json`, or the user's `~/.gemini/settings.json`."""
        return gemini_layout.settings_file(project_dir)

    def merge_hooks(self, settings: dict[str, Any], command_for: Callable[[str], str]) -> None:
        """`AfterTool` on `run_shell_command` (a commit made by Gemini's shell tool) and
        `SessionEnd`, in Claude Code's shape with Gemini's millisecond timeouts."""
        from sessionledger.hookmarks import SettingsError, our_event

        hooks = settings.setdefault("hooks", {})
        if not isinstance(hooks, dict):
            raise SettingsError("`hooks` is not an object; fix it by hand first")
        for event, name in self.hook_events.items():
            groups = hooks.setdefault(event, [])
            if not isinstance(groups, list):
                raise SettingsError(f"hooks.{event} is not a list; fix it by hand first")
            handler = {"type": "command", "command": command_for(name), "timeout": 30000}
            mine = [
                h
                for g in groups
                if isinstance(g, dict)
                for h in g.get("hooks", [])
                if isinstance(h, dict) and our_event(h.get("command")) == name
            ]
            if mine:
                mine[0].update(handler)
                continue
            group: dict[str, Any] = {"hooks": [handler]}
            groups.append({"matcher": "run_shell_command", **group} if event == "AfterTool" else group)

    def hooks_off(self, settings: dict[str, Any]) -> str | None:
        """`hooksConfig.enabled` (default true), and the older switches `hooks.enabled` (v0.24)
        and `tools.enableHooks` (the experiment before it)."""
        for section, key in (("hooksConfig", "enabled"), ("hooks", "enabled"), ("tools", "enableHooks")):
            value = settings.get(section)
            if isinstance(value, dict) and value.get(key) is False:
                return f"{section}.{key} is false in these settings: Gemini CLI will not run the hooks"
        return None

    def hook_installed(self, project_dir: str, home: str) -> bool:
        return gemini_layout.hook_installed(project_dir)


AGENT = Gemini()


def json_document(doc: dict[str, Any]) -> bytes:
    """As Gemini CLI writes a `.json` recording: `JSON.stringify(conversation, null, 2)`."""
    import json

    return json.dumps(doc, indent=2, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _as_jsonl(raw: bytes, session_id: str, root_hash: str) -> bytes:
    """The recording as JSONL with its session id and project replaced (metadata line and `$set`)."""
    import json

    from sessionledger.core.formats.gemini_replay import legacy_document

    doc = legacy_document(raw)
    if doc is not None:
        meta = {k: v for k, v in doc.items() if k != "messages"}
        rows: list[Any] = [meta, *[m for m in doc["messages"] if isinstance(m, dict)]]
    else:
        rows = []
        for line in raw.splitlines():
            try:
                rec = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(rec, dict):
                rows.append(rec)
    out = []
    for rec in rows:
        target = rec.get("$set") if isinstance(rec.get("$set"), dict) else rec
        if isinstance(target.get("sessionId"), str):
            target["sessionId"] = session_id
            if isinstance(target.get("projectHash"), str):
                target["projectHash"] = root_hash
        out.append(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
    return "".join(out).encode("utf-8", "surrogatepass")


def _document_of(raw: bytes) -> dict[str, Any] | None:
    """A legacy document again from the JSONL a cut of one comes back as (a metadata line, then
    one line per message: `formats.gemini.cut_after_turn`); None when it is not that shape."""
    import json

    rows = []
    for line in raw.splitlines():
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            return None
        if not isinstance(rec, dict):
            return None
        rows.append(rec)
    if (
        not rows
        or "messages" in rows[0]
        or "sessionId" not in rows[0]
        or any("$set" in rec or "$rewindTo" in rec for rec in rows)
    ):
        return None
    return {**rows[0], "messages": rows[1:]}

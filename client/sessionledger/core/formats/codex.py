"""OpenAI Codex CLI rollouts (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<thread id>.jsonl`).

Where the files are, resume and hooks: docs/agents.md ("Codex CLI"). This docstring holds the record
format the parser needs. Facts are from openai/codex `codex-rs/core/src/rollout/recorder.rs` and
`policy.rs` (commits and sources listed in docs/agents.md "Sources").

Every line is `{"timestamp": ISO-8601 UTC, "type": T, "payload": {…}}`:

- `session_meta`: `id` (thread id), `timestamp`, `cwd`, `originator` (`codex_cli_rs`, `codex-tui`,
  `codex_vscode`, `codex_exec`…), `cli_version`, `source`, `model_provider`, `instructions` or
  `base_instructions.text` (the system prompt), `git` {commit_hash, branch, repository_url},
  `forked_from_id`. Gives `agent_session_id` (first line), `agent_version` (last line) and
  `stats.session` {cwd, originator, source, git}; no message.
- `turn_context`: `turn_id` (newer), `cwd`, `model`, `effort`, `approval_policy`, `sandbox_policy`…
  (once per model request in 0.40, once per turn in 0.125); sets `model` on the following assistant
  messages.
- `response_item`: what the model saw or produced (below) → messages.
- `event_msg`: what the UI showed: `user_message` {message, images} marks prompts; `turn_aborted`,
  `error`, `warning` become system messages; `agent_message`, `agent_reasoning`, `token_count`,
  `task_started`/`task_complete`, `exec_command_end`, `patch_apply_end`, `web_search_end` are copies
  of response items or bookkeeping (counted in `stats.ignored_lines`). Late-2025 builds persist only
  `user_message`, `agent_message`, `agent_reasoning`, `token_count`, `turn_aborted`, compaction and
  review events; newer ones keep more.
- `compacted`: `message` (the summary replacing the history), `replacement_history` →
  `role: system, kind: summary, compact_summary: true`.

`response_item.payload.type`:

- `message`: `role` user/assistant/developer/system, `content` [{type input_text/output_text/
  input_image, text/image_url}], `phase` (newer assistant messages: `commentary`, `final_answer`).
  Assistant → `text` (with `model`, `phase`); user → prompt or context (below); developer/system →
  `kind: system, meta: true, subtype: instructions`.
- `reasoning`: `summary` [{summary_text}], `content` (usually null), `encrypted_content` → `thinking`
  with the summary; encrypted-only reasoning is counted as ignored.
- `function_call` {name, arguments (a JSON *string*), call_id}, `custom_tool_call` {name (`apply_patch`),
  input (free text), call_id, status}, `local_shell_call` {call_id, action {type: exec, command: argv,
  working_directory}} → `tool_use` with `tool.id = call_id`.
- `function_call_output` / `custom_tool_call_output` {call_id, output}: a string (a JSON string
  `{"output", "metadata": {"exit_code", "duration_seconds"}}` for `shell` and `apply_patch`; a text with
  a `Process exited with code N` header for `exec_command`), or `{content, success}`, or content items
  → `tool_result`, `is_error` from the exit code or `success: false`.
- `web_search_call` {status, action {query}}, no output item → `tool_use` (WebSearch) without a result.
- `ghost_snapshot`, `compaction`: ignored. Unknown types (later builds add some) are counted in
  `stats.ignored_lines`, never fatal.

Pre-envelope rollouts (mid 2025 and older) have a bare first line `{"id", "timestamp",
"instructions"}`, bare response items and `{"record_type": "state"}` lines; both read the same. Codex
tolerates extra top-level keys, which lets `slim` add `sessionledger_line_id` (removed by `restore`).

A prompt is a `user_message` event: the user's input as the UI showed it. User `response_item`s are
both typed text and context Codex writes for the model (`<environment_context>`, `# AGENTS.md
instructions for …` / `<user_instructions>`, `<permissions instructions>`, `<turn_aborted>`,
`<user_shell_command>`, `<skill>`, IDE context `# Context from my IDE setup: … ## My request for Codex:`,
`# Files mentioned by the user:`). The prompt is placed at the latest user item since the previous prompt
with the same text (or containing it), else at the event; every other user item is context
(`kind: system, meta: true, subtype: environment|instructions|permissions|interrupt|shell_command|skill|context`).
Files without any `user_message` event fall back to the wrapper test. A prompt wrapped in IDE or
file-mention context shows its request part (`ide_context: true`).

A turn starts at its prompt's line, moved back over what Codex writes for the turn before it
(`task_started`, `turn_context`, developer/system messages, context user items).

Tokens: `token_count.info.total_token_usage` is cumulative and repeated; a segment's usage is its last
total minus the total before its first request. OpenAI counts cached input inside `input_tokens`:
`input_tokens` here is the uncached part, `cache_read_input_tokens` the cached part. Each response also
gets its request's `usage` (`last_token_usage` of the `token_count` event after it; a repeated total
adds nothing), so the session page and insights' cost count Codex tokens per response and model.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from .base import ParsedTranscript
from .codex_messages import Message, build_messages
from .codex_records import CALLS, LINE_ID, OUTPUTS, Entry, call_id_of, prompt_lines, read_entries
from .jsonlines import (
    FunctionFormat,
    Line,
    assemble,
    count_in_dicts,
    dump_line,
    forward_cut,
    line_id,
    safe_turn_cut,
    scan,
    text_of,
)

NAME = "codex"

_PREAMBLE_EVENTS = frozenset({"task_started", "turn_started"})
_SLIM_OUTPUT = 1024  # exec_command_end output fields longer than this are slimmed
_SLIMMED = "[slimmed]"
_MAX_DEPTH = 10
_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


# --- facts ------------------------------------------------------------------------------


def token_usage(infos: list[dict[str, Any]]) -> dict[str, int]:
    """Tokens used within this segment, from the cumulative `token_count` events.

    `total_token_usage` grows over the session, so a segment's own usage is its last total minus
    the total before its first request (that first event's total minus its `last_token_usage`).
    OpenAI counts cached input inside `input_tokens`; here input is the uncached part and the
    cached part is `cache_read_input_tokens`, like Claude Code's usage.
    """
    totals = dict.fromkeys(_USAGE_KEYS, 0)
    if not infos:
        return totals
    last, first = _usage(infos[-1].get("total_token_usage")), _usage(infos[0].get("total_token_usage"))
    start = {k: first[k] - v for k, v in _usage(infos[0].get("last_token_usage")).items()}
    used = {k: max(0, last[k] - start[k]) for k in last}
    totals["input_tokens"] = max(0, used["input"] - used["cached"])
    totals["cache_read_input_tokens"] = used["cached"]
    totals["cache_creation_input_tokens"] = used["cache_write"]
    totals["output_tokens"] = used["output"]
    return totals


def _usage(value: Any) -> dict[str, int]:
    data = value if isinstance(value, dict) else {}
    keys = {
        "input": "input_tokens",
        "cached": "cached_input_tokens",
        "cache_write": "cache_write_input_tokens",
        "output": "output_tokens",
    }
    return {k: data[v] if isinstance(data.get(v), int) else 0 for k, v in keys.items()}


def _session_facts(metas: list[dict[str, Any]]) -> dict[str, Any]:
    """cwd, origin and git state from the first session line (strings only)."""
    if not metas:
        return {}
    meta = metas[0]
    found = {k: meta[k] for k in ("cwd", "originator", "source", "model_provider") if isinstance(meta.get(k), str)}
    git = meta.get("git")
    if isinstance(git, dict):
        found["git"] = {k: v for k, v in git.items() if isinstance(v, str)}
    return found


def _patched_files(messages: list[Message]) -> list[str]:
    """Every file of a multi-file patch (the shared facts only read `file_path`)."""
    seen: dict[str, None] = {}
    for msg in messages:
        tool_input = msg["tool"]["input"] if msg["kind"] == "tool_use" else None
        extra = tool_input.get("files") if isinstance(tool_input, dict) else None
        for path in extra if isinstance(extra, list) else []:
            if isinstance(path, str) and path:
                seen[path] = None
    return list(seen)


# --- the format -------------------------------------------------------------------------


def parse(raw: bytes, *, subagents: Mapping[str, bytes] | None = None) -> ParsedTranscript:
    """Parse a rollout (a whole file or a segment). Sub-agents are separate rollouts: ignored."""
    scanned = scan(raw)
    messages, state = build_messages(read_entries(scanned.lines))
    meta = state.metas[-1] if state.metas else {}
    stats = {
        "lines": scanned.count,
        "skipped_lines": scanned.skipped,
        "truncated_bytes": scanned.truncated_bytes,
        "ignored_lines": state.ignored,
        "session": _session_facts(state.metas),
    }
    return assemble(
        NAME,
        messages,
        stats,
        token_usage=token_usage(state.usage),
        agent_version=text_of(meta.get("cli_version")) or None,
        agent_session_id=(text_of(state.metas[0].get("id")) or None) if state.metas else None,
        extra_files=_patched_files(messages),
    )


def _is_preamble(entry: Entry, prompts: dict[int, str]) -> bool:
    """Lines Codex writes for a turn before its prompt: task start, turn context, context text."""
    if entry.line.rec is None:
        return not entry.line.data.strip()
    if entry.cat == "turn_context":
        return True
    if entry.cat == "event_msg":
        return entry.ptype in _PREAMBLE_EVENTS
    if entry.cat == "response_item" and entry.ptype == "message":
        role = entry.payload.get("role")
        return role in ("developer", "system") or (role == "user" and entry.index not in prompts)
    return False


def _start_positions(entries: list[Entry]) -> list[int]:
    prompts = prompt_lines(entries)
    starts: list[int] = []
    for position in sorted(prompts):
        floor = starts[-1] + 1 if starts else 0
        start = position
        while start > floor and _is_preamble(entries[start - 1], prompts):
            start -= 1
        starts.append(start)
    return starts


def _pairs(entries: list[Entry]) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    pairs: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    for entry in entries:
        call_id = call_id_of(entry.payload) if entry.cat == "response_item" else None
        if call_id and entry.ptype in CALLS:
            pairs.append(((call_id,), ()))
        elif call_id and entry.ptype in OUTPUTS:
            pairs.append(((), (call_id,)))
        else:
            pairs.append(((), ()))
    return pairs


def turn_starts(raw: bytes) -> list[int]:
    entries = read_entries(scan(raw).lines)
    return [entries[i].line.offset for i in _start_positions(entries)]


def cut_after_turn(raw: bytes, n: int) -> bytes:
    """The first `n` turns as a line prefix of `raw`; never between a call and its output."""
    entries = read_entries(scan(raw).lines)
    cut = safe_turn_cut(_start_positions(entries), _pairs(entries), n)
    return raw if cut is None else raw[: entries[cut].line.offset]


def answer_ends(raw: bytes) -> dict[str, int]:
    """call id -> where the line that first answers it ends (import cuts a commit's segment there)."""
    ends: dict[str, int] = {}
    entries = read_entries(scan(raw).lines)
    for entry, (_, answered) in zip(entries, _pairs(entries), strict=True):
        for call_id in answered:
            ends.setdefault(call_id, entry.line.offset + len(entry.line.data))
    return ends


def cut_at(raw: bytes, offset: int) -> bytes:
    """The lines up to the one holding byte `offset - 1`, moved on until no call lacks its output."""
    entries = read_entries(scan(raw).lines)
    return raw[: forward_cut([e.line.offset for e in entries], _pairs(entries), offset, len(raw))]


def slim(raw: bytes, *, image_threshold: int = 8192) -> tuple[bytes, dict[str, int]]:
    """Shrink UI-only command output copies and big inline images; other lines stay as they are.

    `exec_command_end` events repeat the output the model already got in the call's
    `function_call_output`; their long output fields become "[slimmed]". Images larger than
    `image_threshold` base64 characters inside `data:` URLs keep their media type only.
    """
    counts = {"events": 0, "images": 0, "bytes_saved": 0}
    out = []
    for line in scan(raw).lines:
        out.append(_slim_line(line, image_threshold, counts))
    result = b"".join(out)
    counts["bytes_saved"] = len(raw) - len(result)
    return result, counts


def _slim_line(line: Line, threshold: int, counts: dict[str, int]) -> bytes:
    rec = line.rec
    if rec is None or (b'"exec_command_end"' not in line.data and b";base64," not in line.data):
        return line.data
    changed = 0
    payload = rec.get("payload")
    if isinstance(payload, dict) and rec.get("type") == "event_msg" and payload.get("type") == "exec_command_end":
        changed += _slim_exec_end(payload, counts)
    images = _slim_images(rec, threshold)
    counts["images"] += images
    if not changed and not images:
        return line.data
    rec[LINE_ID] = line_id("cx", line.data)
    return dump_line(rec, line.data)


def _slim_exec_end(payload: dict[str, Any], counts: dict[str, int]) -> int:
    slimmed = 0
    for key in ("aggregated_output", "formatted_output", "stdout", "stderr"):
        value = payload.get(key)
        if isinstance(value, str) and len(value) > _SLIM_OUTPUT:
            payload[key] = _SLIMMED
            slimmed += 1
    if slimmed:
        payload["slimmed"] = True
        counts["events"] += 1
    return slimmed


def _slim_images(rec: dict[str, Any], threshold: int) -> int:
    def visit(node: dict[str, Any]) -> int:
        url = node.get("image_url")
        if not isinstance(url, str) or not url.startswith("data:") or len(url) <= threshold:
            return 0
        at = url.find(";base64,")
        if at < 0:
            return 0
        node.update(image_url=f"{url[: at + 8]}{_SLIMMED}", slimmed=True, original_size=(len(url) - at - 8) * 3 // 4)
        return 1

    return count_in_dicts(rec, visit, max_depth=_MAX_DEPTH)


def encode_project_dir(cwd: str) -> str:
    """Codex files rollouts by date, not by project: the project key is the session's cwd.

    `session_meta.payload.cwd` is compared with it (see `locate.codex_sessions`).
    """
    return cwd.rstrip("/") or "/"


FORMAT = FunctionFormat(NAME, sys.modules[__name__])

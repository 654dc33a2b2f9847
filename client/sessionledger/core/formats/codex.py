"""OpenAI Codex CLI rollouts (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`).

Every line is `{"timestamp", "type", "payload"}` with `type` one of `session_meta`,
`turn_context`, `response_item` (what the model saw and said: messages, reasoning, tool calls and
their outputs, paired by `call_id`), `event_msg` (what the UI showed: `user_message`,
`token_count`, `turn_aborted`…) and `compacted`. Rollouts written before the envelope (mid 2025)
have bare response items after a bare session line; both read the same. The record types, the
prompt rule and the tool mapping are documented in docs/agents.md ("Codex CLI").

A prompt is a `user_message` event: the user's input as the UI showed it. The user
`response_item` with the same text is where the prompt sits in the file (the event follows it);
other user response items are context Codex wrote for the model (`<environment_context>`,
AGENTS.md, IDE context). Files without any `user_message` event fall back to that wrapper test.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .base import ParsedTranscript
from .jsonlines import (
    FunctionFormat,
    Ids,
    Line,
    assemble,
    count_in_dicts,
    dump_line,
    forward_cut,
    iso_utc,
    line_id,
    safe_turn_cut,
    scan,
    text_of,
)
from .render import human_size, tool_summary
from .toolmap import codex_arguments, codex_call, codex_local_shell, codex_web_search

NAME = "codex"
Message = dict[str, Any]

_ENVELOPE = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
_RESPONSE_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "ghost_snapshot",
        "compaction",
    }
)
_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
_PREAMBLE_EVENTS = frozenset({"task_started", "turn_started"})
# User text Codex writes for the model (not typed by the user) -> message subtype.
_CONTEXT_PREFIXES: tuple[tuple[str, str], ...] = (
    ("<environment_context>", "environment"),
    ("<user_instructions>", "instructions"),
    ("# AGENTS.md instructions", "instructions"),
    ("<permissions instructions>", "permissions"),
    ("<turn_aborted>", "interrupt"),
    ("<user_shell_command>", "shell_command"),
    ("<subagent_notification>", "subagent"),
    ("<skill>", "skill"),
)
_TAG = re.compile(r"<([a-z_][a-z0-9_ -]{0,40}?)(/?)>")
# Context blocks the IDE and desktop app put before what the user typed (which follows the marker).
_CONTEXT_HEADERS = ("# Context from my IDE setup:", "# Files mentioned by the user:")
_REQUEST_MARKER = "## My request for Codex:"
_EXIT_CODE = re.compile(r"^Process exited with code (-?\d{1,6})$", re.MULTILINE)
_HEADER_SCAN = 1024  # the unified-exec header sits in the first lines of an output
_SLIM_OUTPUT = 1024  # exec_command_end output fields longer than this are slimmed
_SLIMMED = "[slimmed]"
_LINE_ID = "sessionledger_line_id"  # added by slim(): keeps message uuids stable (see _line_id)
_MAX_DEPTH = 10
_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


@dataclass
class _Entry:
    """A line, what kind of record it is (None: blank, broken or unknown) and its payload."""

    index: int
    line: Line
    cat: str | None = None
    ptype: str | None = None
    payload: dict[str, Any] = field(default_factory=dict)


# --- reading lines ----------------------------------------------------------------------


def _entries(lines: list[Line]) -> list[_Entry]:
    return [_entry(i, line) for i, line in enumerate(lines)]


def _entry(index: int, line: Line) -> _Entry:
    rec = line.rec
    entry = _Entry(index, line)
    if rec is None:
        return entry
    kind, payload = rec.get("type"), rec.get("payload")
    if kind in _ENVELOPE and isinstance(payload, dict):
        entry.cat, entry.payload = kind, payload
    elif "payload" not in rec and kind in _RESPONSE_TYPES:  # pre-envelope rollout
        entry.cat, entry.payload = "response_item", rec
    elif "payload" not in rec and kind is None and isinstance(rec.get("id"), str) and "timestamp" in rec:
        entry.cat, entry.payload = "session_meta", rec
    ptype = entry.payload.get("type")
    entry.ptype = ptype if isinstance(ptype, str) else None
    return entry


def _timestamp(entry: _Entry) -> str | None:
    rec = entry.line.rec or {}
    return iso_utc(rec.get("timestamp")) or iso_utc(entry.payload.get("timestamp"))


def _parts_text(content: Any) -> str:
    """Text of a message's content parts; images become placeholders."""
    if isinstance(content, str):
        return content
    parts = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") in ("input_image", "image"):
            parts.append(_image_placeholder(part))
        else:
            text = part.get("text")
            if isinstance(text, str) and text:
                parts.append(text)
    return "\n\n".join(parts)


def _image_placeholder(part: dict[str, Any]) -> str:
    url = part.get("image_url")
    if isinstance(url, str) and url.startswith("data:"):
        media = url[5 : url.find(";")] if 0 < url.find(";") < 64 else "image"
        comma = url.find(",")
        size = max(0, (len(url) - comma - 1) * 3 // 4) if comma > 0 else 0
        if part.get("slimmed") and isinstance(part.get("original_size"), int):
            size = part["original_size"]
        return f"[image: {media}, {human_size(size)}]" if size else f"[image: {media}]"
    return "[image]"


def _is_user_item(entry: _Entry) -> bool:
    return entry.cat == "response_item" and entry.ptype == "message" and entry.payload.get("role") == "user"


def _is_user_event(entry: _Entry) -> bool:
    """A `user_message` event with something in it (an empty one opens no turn)."""
    return entry.cat == "event_msg" and entry.ptype == "user_message" and bool(_event_text(entry.payload))


def _event_text(payload: dict[str, Any]) -> str:
    text = text_of(payload.get("message"))
    images = payload.get("images")
    if isinstance(images, list) and images:
        text = "\n\n".join([text, *("[image]" for _ in images)])
    return text.strip()


def context_label(text: str) -> str | None:
    """The subtype of user text Codex wrote for the model, or None when it reads as typed."""
    head = text.lstrip()[:64]
    for prefix, label in _CONTEXT_PREFIXES:
        if head.startswith(prefix):
            return label
    match = _TAG.match(head)
    if match is None:
        return None
    return "context" if match.group(2) or f"</{match.group(1)}>" in text else None


# --- prompts ----------------------------------------------------------------------------


def prompt_lines(entries: list[_Entry]) -> dict[int, str]:
    """Line index -> "item" or "event": where each prompt sits (see the module docstring)."""
    if not any(_is_user_event(e) for e in entries):
        return {
            e.index: "item"
            for e in entries
            if _is_user_item(e) and not context_label(_parts_text(e.payload.get("content")))
        }
    prompts: dict[int, str] = {}
    pending: list[_Entry] = []
    for entry in entries:
        if _is_user_item(entry):
            pending.append(entry)
        elif _is_user_event(entry):
            match = _matching_item(pending, text_of(entry.payload.get("message")))
            if match is None:
                prompts[entry.index] = "event"
            else:
                prompts[match.index] = "item"
            pending = []
    return prompts


def _matching_item(pending: list[_Entry], typed: str) -> _Entry | None:
    """The latest user item since the previous prompt whose text is what the user typed."""
    typed = typed.strip()
    for entry in reversed(pending):
        text = _parts_text(entry.payload.get("content")).strip()
        if text == typed or (typed and typed in text and not context_label(text)):
            return entry
    return None


def _prompt_text(text: str) -> tuple[str, dict[str, Any]]:
    """What the user asked: the request after an IDE/app context block, else the text itself."""
    if text.lstrip().startswith(_CONTEXT_HEADERS):
        at = text.find(_REQUEST_MARKER)
        if at >= 0:
            return text[at + len(_REQUEST_MARKER) :].strip(), {"ide_context": True}
    return text, {}


# --- messages ---------------------------------------------------------------------------


@dataclass
class _State:
    ids: Ids = field(default_factory=Ids)
    prompts: dict[int, str] = field(default_factory=dict)
    model: str | None = None
    ignored: dict[str, int] = field(default_factory=dict)
    usage: list[dict[str, Any]] = field(default_factory=list)
    metas: list[dict[str, Any]] = field(default_factory=list)


def _base(state: _State, entry: _Entry, role: str, kind: str, content: str, wanted: str | None = None) -> Message:
    return {
        "index": 0,
        "uuid": state.ids.take(wanted or _line_id(entry.line)),
        "role": role,
        "kind": kind,
        "timestamp": _timestamp(entry),
        "turn": None,
        "content": content,
    }


def _line_id(line: Line) -> str:
    """The line's own id; a line rewritten by `slim` carries the id of its original bytes."""
    kept = line.rec.get(_LINE_ID) if line.rec is not None else None
    return kept if isinstance(kept, str) and kept.startswith("cx-") else line_id("cx", line.data)


def _messages(entry: _Entry, state: _State) -> list[Message]:
    if entry.cat == "response_item":
        return _response_item(entry, state)
    if entry.cat == "event_msg":
        return _event(entry, state)
    if entry.cat == "compacted":
        text = text_of(entry.payload.get("message"))
        if not text:
            return []
        msg = _base(state, entry, "system", "summary", text)
        msg["compact_summary"] = True
        return [msg]
    if entry.cat == "session_meta":
        state.metas.append(entry.payload)
    elif entry.cat == "turn_context" and isinstance(entry.payload.get("model"), str):
        state.model = entry.payload["model"]
    return []


def _response_item(entry: _Entry, state: _State) -> list[Message]:
    kind = entry.ptype
    if kind == "message":
        return _message(entry, state)
    if kind == "reasoning":
        return _reasoning(entry, state)
    if kind in _CALLS or kind == "web_search_call":
        return [_call(entry, state)]
    if kind in _OUTPUTS:
        return [_output(entry, state)]
    return []


def _message(entry: _Entry, state: _State) -> list[Message]:
    role = entry.payload.get("role")
    text = _parts_text(entry.payload.get("content"))
    if not text.strip():
        return []
    if role == "assistant":
        msg = _base(state, entry, "assistant", "text", text, _payload_id(entry))
        if state.model:
            msg["model"] = state.model
        if isinstance(entry.payload.get("phase"), str):
            msg["phase"] = entry.payload["phase"]
        return [msg]
    if role == "user" and state.prompts.get(entry.index) == "item":
        return [_prompt(entry, state, text)]
    label = context_label(text) if role == "user" else "instructions"
    msg = _base(state, entry, "user" if role == "user" else "system", "system", text)
    msg.update(meta=True, subtype=label or "text")
    if role == "user" and label is None:
        msg["kind"] = "text"
        del msg["meta"], msg["subtype"]
    return [msg]


def _prompt(entry: _Entry, state: _State, text: str) -> Message:
    content, marks = _prompt_text(text)
    msg = _base(state, entry, "user", "prompt", content)
    msg.update(marks)
    return msg


def _reasoning(entry: _Entry, state: _State) -> list[Message]:
    texts = [_parts_text(entry.payload.get("summary")), _parts_text(entry.payload.get("content"))]
    text = "\n\n".join(t for t in texts if t.strip())
    if not text:
        return []  # encrypted only: nothing a reader can see (counted as ignored)
    return [_base(state, entry, "assistant", "thinking", text, _payload_id(entry))]


def _payload_id(entry: _Entry) -> str | None:
    value = entry.payload.get("id")
    return value if isinstance(value, str) and value else None


def _call(entry: _Entry, state: _State) -> Message:
    payload = entry.payload
    agent_name = text_of(payload.get("name"))
    if entry.ptype == "local_shell_call":
        agent_name = "local_shell"
        name, tool_input = codex_local_shell(payload.get("action"))
    elif entry.ptype == "web_search_call":
        agent_name = "web_search"
        name, tool_input = "WebSearch", codex_web_search(payload.get("action"))
    elif entry.ptype == "custom_tool_call":
        name, tool_input = codex_call(agent_name, payload.get("input"))
    else:
        name, tool_input = codex_call(agent_name, codex_arguments(payload.get("arguments")))
    call_id = _call_id(payload)
    msg = _base(state, entry, "assistant", "tool_use", tool_summary(tool_input), call_id)
    msg["tool"] = {"name": name or "unknown", "input": tool_input, "id": call_id, "agent_name": agent_name}
    if state.model:
        msg["model"] = state.model
    return msg


def _call_id(payload: dict[str, Any]) -> str | None:
    for key in ("call_id", "id"):
        value = payload.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _output(entry: _Entry, state: _State) -> Message:
    text, is_error = output_text(entry.payload.get("output"))
    call_id = _call_id(entry.payload)
    msg = _base(state, entry, "tool", "tool_result", text, f"{call_id}:output" if call_id else None)
    msg["tool"] = {"id": call_id, "is_error": is_error}
    return msg


def output_text(output: Any) -> tuple[str, bool]:
    """(text, is_error) of a call output in any of the shapes Codex has written."""
    if isinstance(output, list):
        return _parts_text(output), False
    if isinstance(output, dict):
        text = output.get("content")
        body = text if isinstance(text, str) else _parts_text(text)
        return body, output.get("success") is False
    if not isinstance(output, str):
        return "", False
    if output.startswith("{") and '"metadata"' in output:
        wrapped = codex_arguments(output)
        if isinstance(wrapped, dict) and isinstance(wrapped.get("output"), str):
            meta = wrapped.get("metadata")
            code = meta.get("exit_code") if isinstance(meta, dict) else None
            return wrapped["output"], isinstance(code, int) and code != 0
    match = _EXIT_CODE.search(output[:_HEADER_SCAN])
    return output, bool(match and int(match.group(1)) != 0)


def _event(entry: _Entry, state: _State) -> list[Message]:
    kind, payload = entry.ptype, entry.payload
    if kind == "user_message" and state.prompts.get(entry.index) == "event":
        return [_prompt(entry, state, _event_text(payload))]
    if kind == "token_count":
        info = payload.get("info")
        if isinstance(info, dict):
            state.usage.append(info)
        return []
    if kind == "turn_aborted":
        reason = text_of(payload.get("reason")) or "interrupted"
        msg = _base(state, entry, "system", "system", f"Turn aborted ({reason})")
        msg.update(subtype="interrupt")
        return [msg]
    if kind in ("error", "warning", "stream_error"):
        msg = _base(state, entry, "system", "system", text_of(payload.get("message")) or kind)
        msg.update(subtype=kind, level="error" if kind != "warning" else "warning")
        return [msg]
    return []


def _group_response(before: list[Message], made: list[Message]) -> None:
    """Give the items of one model response one `message_id` (the session page's one card).

    A response is the run of assistant items (reasoning, text, calls) between two inputs; its id
    is the uuid of its first item, so it is the same in a whole file and in a segment.
    """
    previous = before[-1] if before else None
    for msg in made:
        if msg["role"] == "assistant":
            same = previous is not None and previous["role"] == "assistant" and "message_id" in previous
            msg["message_id"] = previous["message_id"] if same and previous else msg["uuid"]
        previous = msg


def _ignored_key(entry: _Entry) -> str:
    if entry.cat is None:
        return "unknown"
    return f"{entry.cat}/{entry.ptype}" if entry.ptype else entry.cat


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
    entries = _entries(scanned.lines)
    state = _State(prompts=prompt_lines(entries))
    messages: list[Message] = []
    for entry in entries:
        made = _messages(entry, state)
        if made:
            _group_response(messages, made)
            messages.extend(made)
        elif entry.line.rec is not None:
            key = _ignored_key(entry)
            state.ignored[key] = state.ignored.get(key, 0) + 1
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


def _is_preamble(entry: _Entry, prompts: dict[int, str]) -> bool:
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


def _start_positions(entries: list[_Entry]) -> list[int]:
    prompts = prompt_lines(entries)
    starts: list[int] = []
    for position in sorted(prompts):
        floor = starts[-1] + 1 if starts else 0
        start = position
        while start > floor and _is_preamble(entries[start - 1], prompts):
            start -= 1
        starts.append(start)
    return starts


def _pairs(entries: list[_Entry]) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    pairs: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    for entry in entries:
        call_id = _call_id(entry.payload) if entry.cat == "response_item" else None
        if call_id and entry.ptype in _CALLS:
            pairs.append(((call_id,), ()))
        elif call_id and entry.ptype in _OUTPUTS:
            pairs.append(((), (call_id,)))
        else:
            pairs.append(((), ()))
    return pairs


def turn_starts(raw: bytes) -> list[int]:
    entries = _entries(scan(raw).lines)
    return [entries[i].line.offset for i in _start_positions(entries)]


def cut_after_turn(raw: bytes, n: int) -> bytes:
    """The first `n` turns as a line prefix of `raw`; never between a call and its output."""
    entries = _entries(scan(raw).lines)
    cut = safe_turn_cut(_start_positions(entries), _pairs(entries), n)
    return raw if cut is None else raw[: entries[cut].line.offset]


def answer_ends(raw: bytes) -> dict[str, int]:
    """call id -> where the line that first answers it ends (import cuts a commit's segment there)."""
    ends: dict[str, int] = {}
    entries = _entries(scan(raw).lines)
    for entry, (_, answered) in zip(entries, _pairs(entries), strict=True):
        for call_id in answered:
            ends.setdefault(call_id, entry.line.offset + len(entry.line.data))
    return ends


def cut_at(raw: bytes, offset: int) -> bytes:
    """The lines up to the one holding byte `offset - 1`, moved on until no call lacks its output."""
    entries = _entries(scan(raw).lines)
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
    rec[_LINE_ID] = line_id("cx", line.data)
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

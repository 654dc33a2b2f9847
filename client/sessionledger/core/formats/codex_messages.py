"""Codex CLI rollout records -> content-document messages (docs/agents.md "Codex CLI").

One pass over the entries in file order: each record makes zero or more messages, the items of one
model response share a `message_id`, and what is not a message (session lines, models, token
counts) is gathered in `State` for the facts `codex.parse` derives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .codex_records import (
    CALLS,
    LINE_ID,
    OUTPUTS,
    Entry,
    call_id_of,
    context_label,
    event_text,
    parts_text,
    prompt_lines,
    prompt_text,
    timestamp,
)
from .jsonlines import Ids, Line, line_id, text_of
from .render import tool_summary
from .toolmap import codex_arguments, codex_call, codex_local_shell, codex_web_search

Message = dict[str, Any]

_EXIT_CODE = re.compile(r"^Process exited with code (-?\d{1,6})$", re.MULTILINE)
_HEADER_SCAN = 1024  # the unified-exec header sits in the first lines of an output


@dataclass
class State:
    ids: Ids = field(default_factory=Ids)
    prompts: dict[int, str] = field(default_factory=dict)
    model: str | None = None
    ignored: dict[str, int] = field(default_factory=dict)
    usage: list[dict[str, Any]] = field(default_factory=list)
    metas: list[dict[str, Any]] = field(default_factory=list)
    previous_total: Any = None  # the last `token_count` event's cumulative usage
    pending_usage: dict[str, int] | None = None  # a request's tokens not yet given to its response
    response_usage: dict[str, dict[str, int]] = field(default_factory=dict)  # message_id -> its tokens


def build_messages(entries: list[Entry]) -> tuple[list[Message], State]:
    """The messages of a rollout's entries, and the state gathered beside them (lines that made no
    message are counted in `state.ignored` by record type)."""
    state = State(prompts=prompt_lines(entries))
    messages: list[Message] = []
    for entry in entries:
        made = _messages(entry, state)
        if made:
            _group_response(messages, made)
            _give_usage(made, state)
            messages.extend(made)
        elif entry.line.rec is not None:
            if entry.cat == "event_msg" and entry.ptype == "token_count":
                _response_usage(messages, entry.payload, state)
            key = _ignored_key(entry)
            state.ignored[key] = state.ignored.get(key, 0) + 1
    return messages, state


def _base(state: State, entry: Entry, role: str, kind: str, content: str, wanted: str | None = None) -> Message:
    return {
        "index": 0,
        "uuid": state.ids.take(wanted or line_id_of(entry.line)),
        "role": role,
        "kind": kind,
        "timestamp": timestamp(entry),
        "turn": None,
        "content": content,
    }


def line_id_of(line: Line) -> str:
    """The line's own id; a line rewritten by `slim` carries the id of its original bytes."""
    kept = line.rec.get(LINE_ID) if line.rec is not None else None
    return kept if isinstance(kept, str) and kept.startswith("cx-") else line_id("cx", line.data)


def _messages(entry: Entry, state: State) -> list[Message]:
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


def _response_item(entry: Entry, state: State) -> list[Message]:
    kind = entry.ptype
    if kind == "message":
        return _message(entry, state)
    if kind == "reasoning":
        return _reasoning(entry, state)
    if kind in CALLS or kind == "web_search_call":
        return [_call(entry, state)]
    if kind in OUTPUTS:
        return [_output(entry, state)]
    return []


def _message(entry: Entry, state: State) -> list[Message]:
    role = entry.payload.get("role")
    text = parts_text(entry.payload.get("content"))
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


def _prompt(entry: Entry, state: State, text: str) -> Message:
    content, marks = prompt_text(text)
    msg = _base(state, entry, "user", "prompt", content)
    msg.update(marks)
    return msg


def _reasoning(entry: Entry, state: State) -> list[Message]:
    texts = [parts_text(entry.payload.get("summary")), parts_text(entry.payload.get("content"))]
    text = "\n\n".join(t for t in texts if t.strip())
    if not text:
        return []  # encrypted only: nothing a reader can see (counted as ignored)
    return [_base(state, entry, "assistant", "thinking", text, _payload_id(entry))]


def _payload_id(entry: Entry) -> str | None:
    value = entry.payload.get("id")
    return value if isinstance(value, str) and value else None


def _call(entry: Entry, state: State) -> Message:
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
    call_id = call_id_of(payload)
    msg = _base(state, entry, "assistant", "tool_use", tool_summary(tool_input), call_id)
    msg["tool"] = {"name": name or "unknown", "input": tool_input, "id": call_id, "agent_name": agent_name}
    if state.model:
        msg["model"] = state.model
    return msg


def _output(entry: Entry, state: State) -> Message:
    text, is_error = output_text(entry.payload.get("output"))
    call_id = call_id_of(entry.payload)
    msg = _base(state, entry, "tool", "tool_result", text, f"{call_id}:output" if call_id else None)
    msg["tool"] = {"id": call_id, "is_error": is_error}
    return msg


def output_text(output: Any) -> tuple[str, bool]:
    """(text, is_error) of a call output in any of the shapes Codex has written."""
    if isinstance(output, list):
        return parts_text(output), False
    if isinstance(output, dict):
        text = output.get("content")
        body = text if isinstance(text, str) else parts_text(text)
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


def _event(entry: Entry, state: State) -> list[Message]:
    kind, payload = entry.ptype, entry.payload
    if kind == "user_message" and state.prompts.get(entry.index) == "event":
        return [_prompt(entry, state, event_text(payload))]
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


_REQUEST_KEYS = ("input_tokens", "cached_input_tokens", "output_tokens")


def _response_usage(messages: list[Message], payload: dict[str, Any], state: State) -> None:
    """Give a response the tokens of its request, as Claude Code's `usage` (input without the cached
    part, `cache_read_input_tokens` the cached part): the response just before the `token_count`
    event if it has none yet (recent versions), else the next one (0.40 wrote the event first).

    The request's usage is `info.last_token_usage`; else the growth of `info.total_token_usage`
    since the previous event; else (early rollouts) the event's own flat counts. Only integers count.
    The event repeats (rate-limit updates): a later one replaces the figures, never adds to them.
    """
    info = payload.get("info")
    info = info if isinstance(info, dict) else {}
    last, total = info.get("last_token_usage"), info.get("total_token_usage")
    if isinstance(total, dict) and total == state.previous_total:
        return  # a repeat (a rate-limit update): the response it follows, if any, is not this request's
    if isinstance(last, dict):
        request = _counts(last)
    elif isinstance(total, dict):
        now, before = _counts(total), _counts(state.previous_total)
        request = {k: max(0, now[k] - before[k]) for k in _REQUEST_KEYS}
    else:
        request = _counts(payload)
    if isinstance(total, dict):
        state.previous_total = total
    if not any(request.values()):
        return
    usage = {
        "input_tokens": max(0, request["input_tokens"] - request["cached_input_tokens"]),
        "cache_read_input_tokens": request["cached_input_tokens"],
        "output_tokens": request["output_tokens"],
    }
    response = _last_response(messages)
    if response and response[0]["message_id"] not in state.response_usage:
        state.pending_usage = usage
        _give_usage(response, state)
    else:  # written before its response's items (0.40 wrote it so): for the next response
        state.pending_usage = usage


def _give_usage(made: list[Message], state: State) -> None:
    """The response's usage on each of its messages: the one it already has, else the pending one."""
    for msg in made:
        key = msg.get("message_id") if msg["role"] == "assistant" else None
        if not isinstance(key, str):
            continue
        if key not in state.response_usage and state.pending_usage is not None:
            state.response_usage[key], state.pending_usage = state.pending_usage, None
        if key in state.response_usage:
            msg["usage"] = dict(state.response_usage[key])
            if state.model and "model" not in msg:
                msg["model"] = state.model


def _counts(value: Any) -> dict[str, int]:
    data = value if isinstance(value, dict) else {}
    return {
        k: v if isinstance(v := data.get(k), int) and not isinstance(v, bool) and v > 0 else 0 for k in _REQUEST_KEYS
    }


def _last_response(messages: list[Message]) -> list[Message]:
    """The messages of the last model response (its `message_id`), if no input came after it."""
    tail: list[Message] = []
    for msg in reversed(messages):
        if msg["role"] != "assistant" or (tail and msg.get("message_id") != tail[0].get("message_id")):
            break
        tail.append(msg)
    return tail


def _ignored_key(entry: Entry) -> str:
    if entry.cat is None:
        return "unknown"
    return f"{entry.cat}/{entry.ptype}" if entry.ptype else entry.cat

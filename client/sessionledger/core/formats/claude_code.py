"""Claude Code transcripts (`~/.claude/projects/<dir>/<session>.jsonl`, docs/claude-code.md §1).

The parse pipeline: scan lines -> dedupe by uuid -> chain order -> messages per block ->
weave sub-agents in -> number messages and turns -> derived facts.

The record format (docs/claude-code.md §1.2-§1.4; the bracketed source tags are listed in its §0). Every
line is one JSON object with a string `type`:

- `user` (uuid, parentUuid): a typed prompt; tool results (`tool_result` blocks); meta or command text; the
  compaction summary.
- `assistant` (uuid): one content block of one API response (§1.5).
- `system` (uuid): `subtype` `compact_boundary`; `stop_hook_summary` {hookCount, hookInfos[], hookErrors[],
  preventedContinuation, stopReason, hasOutput}; `local_command`; `turn_duration` {durationMs}; `api_error`;
  `informational`; `away_summary`. CLI 1.0.89 wrote system lines without subtype ("Running
  PostToolUse:Bash…") with `level`, `toolUseID` [FH][SP][CCL-msg][TX].
- `summary` (no uuid; `leafUuid`): a resume-picker title; `leafUuid` must name a real line, or resume
  reports the session missing [CCL-msg][TX].
- `file-history-snapshot` (`messageId`): {messageId, snapshot, isSnapshotUpdate}, for checkpoints and rewind.
- `queue-operation`: {operation: enqueue/dequeue/remove, timestamp, sessionId, content?}: messages typed
  while Claude works, task notifications [SP][CCL-msg].
- `progress` (uuid): {data: {type: hook_progress/agent_progress/bash_progress/waiting_for_task, …},
  toolUseID, parentToolUseID}; not written since 2.1.85 (anthropics/claude-code#35024).
- `attachment` (uuid): {attachment: {type, …}}: `hook_additional_context` {hookName, hookEvent, content},
  `queued_command` (~2.1.101+), `hook_success`, deferred-tool deltas [CCL-dag][CCL-msg].
- `custom-title`, `agent-name`, `ai-title`, `last-prompt`, `mode`, `pr-link`, `file-history-delta`,
  `agent-setting`: bookkeeping; a `pr-link` line can be a file's first (#62851).

Envelope fields. Every line: `uuid`, `parentUuid` (null at a root), `sessionId`, `timestamp` (ISO 8601
UTC), `cwd`, `gitBranch` (empty outside a repository), `version`, `userType`, `isSidechain`, `slug`
(2.0.7x+). Assistant lines: `requestId`, `message.{id, model, usage, content, stop_reason}` (2.1.x usage adds
`cache_creation`, `service_tier`, `inference_geo`). Prompt lines: `thinkingMetadata`, `todos`,
`permissionMode`, `imagePasteIds`. Tool-result lines: `toolUseResult`, the tool's structured output (Bash
`{stdout, stderr, interrupted, isImage}`, Read `{type: "text", file: {filePath, content, numLines, startLine,
totalLines}}`, Task `{status, prompt, agentId, content, totalDurationMs, totalTokens, totalToolUseCount,
usage}`), a plain string for some errors and an array for MCP tools; 2.1.38+ adds
`sourceToolAssistantUUID`, a persisted output `persistedOutputPath`. Flags: `isMeta` (text the user did not
type), `isCompactSummary` with `isVisibleInTranscriptOnly`, `logicalParentUuid` and `compactMetadata` on
`compact_boundary`, `agentId` in sub-agent files, `toolUseID` and `level` on system lines,
`isApiErrorMessage`. A `promptId` on user lines is reported only by unattributed parser comments; unused.

`message.content` is a string or a list of blocks: `text` {text}; `image` {source: {type: "base64",
media_type, data}}, also nested in `tool_result.content`; `tool_result` {tool_use_id, content: a string or
text/image blocks, is_error?} (user lines only); `thinking` {thinking, signature}, `redacted_thinking`
{data}; `tool_use` {id, name, input} (MCP tools `mcp__<server>__<tool>`; also `server_tool_use`,
`mcp_tool_use`). Markup inside text: `<command-name>`, `<command-message>`, `<command-args>`,
`<local-command-stdout>`, `<local-command-caveat>`, `<bash-input>`, `<bash-stdout>`, `<system-reminder>`,
`<task-notification>`, `[Request interrupted by user]`.

What the parser reads and how each becomes messages: `messages.py` (one message per block, images as
placeholders, `redacted_thinking` as `[redacted thinking]`, slash commands as `/name args`, `<bash-input>`
as `!command`); what it drops is counted in `stats.ignored_lines` (`system/turn_duration` always,
`system/stop_hook_summary` unless a hook failed or stopped the turn).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..claude_layout import SYSTEM_REMINDER
from . import facts, paths, persisted, slimming, steps, turns
from .base import ParsedTranscript
from .graph import chain_order, dedupe
from .lines import scan
from .messages import build_messages
from .subagents import Piece, answered_ids, find_links, split_inline, weave

NAME = "claude-code"


@dataclass
class _File:
    """One parsed file: its piece for weaving plus its own line accounting."""

    piece: Piece
    records: list[dict[str, Any]]
    stats: dict[str, Any]


def parse(
    raw: bytes, *, subagents: Mapping[str, bytes] | None = None, tool_outputs: Mapping[str, bytes] | None = None
) -> ParsedTranscript:
    """Parse a main transcript (a whole file or a segment), optional sub-agent files and the
    persisted outputs of large tool results."""
    main = _read(raw)
    agents = {agent_id: _read(data, agent_id) for agent_id, data in (subagents or {}).items()}
    inline = split_inline(main.piece, main.records)  # 1.0.x: sub-agents inside the main file
    messages, parents = weave(main.piece, {**inline, **{k: f.piece for k, f in agents.items()}})
    attached = persisted.attach(messages, tool_outputs or {})
    turn_list = facts.number_and_turns(messages)
    files, counts = facts.tool_facts(messages)
    first, last = facts.time_span(messages)
    return ParsedTranscript(
        agent=NAME,
        messages=messages,
        turns=turn_list,
        stats={**_stats(main, agents, parents), **({"persisted_outputs": attached} if tool_outputs else {})},
        title=facts.title_from(turn_list, messages),
        prompts=[t["prompt"] for t in turn_list],
        last_assistant_text=facts.last_assistant_text(messages),
        files_touched=files,
        tool_counts=counts,
        token_usage=facts.token_usage(messages),
        agent_version=_last_str(main.records, "version"),
        agent_session_id=_last_str(main.records, "sessionId"),
        first_timestamp=first,
        last_timestamp=last,
    )


def _read(raw: bytes, agent_id: str | None = None) -> _File:
    scanned = scan(raw)
    unique, duplicates = dedupe(scanned.records)
    messages, ignored = build_messages(chain_order(unique))
    if agent_id is not None:
        _mark_sidechain(messages, agent_id)
    piece = Piece(messages, find_links(unique, messages), answered_ids(messages))
    stats = {
        "lines": scanned.lines,
        "skipped_lines": scanned.skipped,
        "truncated_bytes": scanned.truncated_bytes,
        "duplicate_lines": duplicates,
        "ignored_lines": ignored,
        "repaired_lines": scanned.repaired,
        "invalid_timestamps": scanned.invalid_timestamps,
    }
    return _File(piece, scanned.records, stats)


def _mark_sidechain(messages: list[dict[str, Any]], agent_id: str) -> None:
    """Sub-agent messages never open a turn, even if a file forgot `isSidechain`."""
    for msg in messages:
        msg["sidechain"] = True
        msg["agent_id"] = agent_id
        if msg["kind"] == "prompt":
            msg["kind"] = "text"


def _stats(main: _File, agents: dict[str, _File], parents: dict[str, str]) -> dict[str, Any]:
    """Main-file accounting; sub-agent broken, repaired and mistimed lines count in the totals too."""
    stats = dict(main.stats)
    if agents:
        for key in ("skipped_lines", "repaired_lines", "invalid_timestamps"):
            stats[key] += sum(f.stats[key] for f in agents.values())
        stats["subagents"] = {
            agent_id: {
                "lines": f.stats["lines"],
                "skipped_lines": f.stats["skipped_lines"],
                "messages": len(f.piece.messages),
                "parent_tool_id": parents.get(agent_id),
            }
            for agent_id, f in agents.items()
        }
    return stats


def _last_str(records: list[dict[str, Any]], key: str) -> str | None:
    """Value of `key` on the last line (file order) that has it: the CLI now in use."""
    for rec in reversed(records):
        value = rec.get(key)
        if isinstance(value, str) and value:
            return value
    return None


class ClaudeCodeFormat:
    """The `TranscriptFormat` for Claude Code (see base.TranscriptFormat)."""

    name = NAME
    snapshots = False
    injected_context = (SYSTEM_REMINDER,)  # hooks' and todos' reminders

    def parse(
        self,
        raw: bytes,
        *,
        subagents: Mapping[str, bytes] | None = None,
        tool_outputs: Mapping[str, bytes] | None = None,
    ) -> ParsedTranscript:
        return parse(raw, subagents=subagents, tool_outputs=tool_outputs)

    def turn_starts(self, raw: bytes) -> list[int]:
        return turns.turn_starts(raw)

    def cut_after_turn(self, raw: bytes, n: int) -> bytes:
        return turns.cut_after_turn(raw, n)

    def cut_at(self, raw: bytes, offset: int) -> bytes:
        return steps.cut_at(raw, offset)

    def line_end(self, raw: bytes, uuid: str) -> int | None:
        return steps.line_end(raw, uuid)

    def steps(self, raw: bytes) -> list[steps.Step]:
        return steps.steps(raw)

    def slim(self, raw: bytes, *, image_threshold: int = 8192) -> tuple[bytes, dict[str, int]]:
        return slimming.slim(raw, image_threshold=image_threshold)

    def encode_project_dir(self, cwd: str) -> str:
        return paths.encode_project_dir(cwd)


FORMAT = ClaudeCodeFormat()

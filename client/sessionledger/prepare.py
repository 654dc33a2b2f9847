"""Make a queued intent uploadable: read its bytes, slim, redact, fit, gzip, describe.

Runs in the detached uploader, never in the hook: slimming, redaction and gzip of a 5 MB turn
take far longer than a hook may. It must still happen before anything leaves the machine, and
its output is written into the queue entry, so a segment captured offline is already reduced to
what will be sent. The order matters: slimming first (it drops whole progress payloads),
redaction on what remains, fitting last so the limit applies to the bytes actually sent.

A segment is its transcript bytes, the sub-agent files' new bytes (either layout: each part says
where it lives, `subagents/agent-<id>.jsonl` or `agent-<id>.jsonl`), and the large tool outputs
Claude Code saved under `<session>/tool-results/` that its tool results point at — redacted
like the rest (docs/client.md "Every byte of a session").
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sessionledger import agents, attribution_capture, gitmeta, log, metalimits, transcripts
from sessionledger.agents.base import SNAPSHOT, Agent
from sessionledger.config import Config
from sessionledger.core import formats, repopaths
from sessionledger.fsutil import atomic_write
from sessionledger.intent import Intent
from sessionledger.queue import Entry, write_json

MAIN = "transcript"
SUBAGENT, TOOL_RESULT = "subagent", "tool_result"
MAX_TOOL_OUTPUT = 64 * 1024 * 1024  # a bigger file is not read at all (the server's limit is far lower)


class BrokenSegment(Exception):
    """The captured bytes cannot be read back as they were (file gone, rewritten) or cannot fit."""


@dataclass
class Part:
    """One transcript (main or sub-agent) on its way to the server."""

    name: str  # "transcript", the agent id, or the tool output's file name
    data: bytes
    kind: str = MAIN  # MAIN, SUBAGENT or TOOL_RESULT
    path: str = ""  # where it lives relative to the session: `subagents/agent-x.jsonl`, `tool-results/y.txt`
    original_size: int = 0
    redaction: dict[str, int] = field(default_factory=dict)
    changed_lines: list[int] = field(default_factory=list)
    slimmed: dict[str, int] = field(default_factory=dict)
    truncated_bytes: int = 0
    truncated_outputs: int = 0

    @property
    def filename(self) -> str:
        """The file in the queue entry (and the upload's file name)."""
        if self.kind == TOOL_RESULT:
            return f"{self.name}.gz"
        return "transcript.jsonl.gz" if self.kind == MAIN else f"agent-{self.name}.jsonl.gz"

    @property
    def field(self) -> str:
        return {MAIN: "transcript", SUBAGENT: "subagent"}.get(self.kind, TOOL_RESULT)


def prepare(entry: Entry, config: Config, limit: int) -> None:
    """Write the entry's gzip parts, `metadata.json` and finally `local.json` (= prepared)."""
    intent = entry.intent
    agent = agents.get(intent.agent)
    parts = _read_parts(entry, agent)
    attribution_capture.write_for_entry(entry, intent, {p.name: p.data for p in parts if p.kind != TOOL_RESULT})
    parts = [_clean(p, config, agent) for p in parts]
    _fit(parts, limit, agent)
    metadata = build_metadata(intent, parts, agent)
    local = _local(intent, parts, limit)
    if intent.kind == "clear":  # the uncommitted diff stat and the message count (docs/design.md §7 /clear)
        from sessionledger import clears

        clears.add_facts(entry, metadata, local, {p.name: p.data for p in parts if p.kind != TOOL_RESULT})
    if cut := metalimits.fit(metadata):  # a huge commit keeps its conversation
        local[metalimits.NOTES] = cut
        log.warning(f"{entry.describe()}: {'; '.join(cut)} (the server's limits)")
    for part in parts:
        atomic_write(entry.file(part.filename), gzip.compress(part.data, compresslevel=6, mtime=0))
    write_json(entry.file("metadata.json"), metadata)
    write_json(entry.file("local.json"), local)
    log.info(f"prepared {entry.describe()}: {sum(len(p.data) for p in parts)} bytes, redacted {metadata['redaction']}")


def _read_parts(entry: Entry, agent: Agent) -> list[Part]:
    intent = entry.intent
    transcript = intent.transcript
    if intent.capture == SNAPSHOT:
        return [Part(MAIN, _read_snapshot(entry, transcript, intent.end_offset, intent.crc))]
    main = _read(transcript, intent.start_offset, intent.end_offset, intent.crc)
    parts = [Part(MAIN, main)]
    for sub in intent.subagents:
        data = _read(sub.path, sub.start_offset, sub.end_offset, sub.crc)
        parts.append(Part(sub.agent_id, data, SUBAGENT, agent.layout_path(transcript, sub.path)))
    return parts + _tool_outputs(agent, transcript, parts)


def _read_snapshot(entry: Entry, transcript: str, size: int, crc: int | None) -> bytes:
    """A whole-file capture: the copy taken at capture time, else (import) the file if unchanged."""
    from sessionledger.segments import SNAPSHOT_FILE

    copy = entry.file(SNAPSHOT_FILE)
    path = copy if os.path.exists(copy) else transcript
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise BrokenSegment(f"cannot read the captured snapshot of {transcript}: {exc}") from None
    if len(data) != size or (crc is not None and transcripts.tail_crc_of(data) != crc):
        raise BrokenSegment(f"{transcript} changed since it was captured (a newer snapshot will follow)")
    return data


def _tool_outputs(agent: Agent, transcript: str, parts: list[Part]) -> list[Part]:
    """The persisted tool outputs the segment's tool results point at (Claude Code 2.1.2+)."""
    from sessionledger.core.formats.persisted import DIRECTORY, referenced_names

    directory = agent.tool_outputs_dir(transcript)
    if directory is None:
        return []
    outputs = []
    for name in dict.fromkeys(n for p in parts for n in referenced_names(p.data)):
        path = os.path.join(directory, name)
        try:
            if not os.path.isfile(path) or os.path.getsize(path) > MAX_TOOL_OUTPUT:
                log.warning(f"persisted tool output {path} is missing or too large; only its preview is captured")
                continue
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            log.warning(f"cannot read persisted tool output {path}: {exc}")
            continue
        outputs.append(Part(name, data, TOOL_RESULT, f"{DIRECTORY}/{name}", original_size=len(data)))
    return outputs


def _read(path: str, start: int, end: int, crc: int | None) -> bytes:
    """The captured range, verified: a rewritten file must not be uploaded as this segment."""
    try:
        data = transcripts.read_range(path, start, end)
    except (OSError, transcripts.TranscriptShrunk) as exc:
        raise BrokenSegment(f"cannot read the captured bytes of {path}: {exc}") from None
    if crc is not None and end > start and transcripts.tail_crc_of(data) != crc:
        raise BrokenSegment(f"{path} changed since it was captured (bytes {start}-{end} differ)")
    if formats.complete_lines(data) != len(data):
        raise BrokenSegment(f"the captured range of {path} does not end at a line boundary")
    return data


def _clean(part: Part, config: Config, agent: Agent) -> Part:
    if part.kind == TOOL_RESULT:  # plain text (or JSON) as the tool printed it, not JSONL
        text, counts = redactor(config).redact_text(part.data.decode("utf-8", "surrogateescape"))
        part.data, part.redaction = text.encode("utf-8", "surrogateescape"), dict(counts)
        return part
    slimmed, counts = agent.format.slim(part.data, image_threshold=int(config["image_threshold"]))
    result = redactor(config).redact_bytes(slimmed)
    part.data, part.slimmed = result.data, counts
    part.redaction, part.changed_lines = dict(result.counts), list(result.changed_lines)
    return part


_REDACTORS: dict[str, Any] = {}


def redactor(config: Config) -> Any:
    """The configured Redactor, built once per rule set (compiling the rules is not free)."""
    from sessionledger.core.redaction import Redactor

    rules = config["redaction"] or {}
    key = json.dumps(rules, sort_keys=True)
    if key not in _REDACTORS:
        _REDACTORS[key] = Redactor.from_config(rules)
    return _REDACTORS[key]


def _fit(parts: list[Part], limit: int, agent: Agent) -> None:
    """Truncate the largest tool outputs until the parts together fit the server's limit.

    Each part gets a share of the limit proportional to its size; the result is checked, and a
    segment that still cannot fit is broken rather than silently dropped or cut mid-line.
    """
    total = sum(len(p.data) for p in parts)
    if total <= limit:
        return
    from sessionledger.fit import fit_to_limit, shorten_output

    outputs = sorted((p for p in parts if p.kind == TOOL_RESULT), key=lambda p: len(p.data), reverse=True)
    for part in outputs:  # the bulkiest first: a saved tool output is what a reader needs least
        if total <= limit:
            break
        before = len(part.data)
        part.data, part.truncated_bytes = shorten_output(part.data, max(0, before - (total - limit)))
        part.truncated_outputs = 1 if part.truncated_bytes else 0
        total -= before - len(part.data)
    if total <= limit:
        return
    jsonl = [p for p in parts if p.kind != TOOL_RESULT]
    room = limit - sum(len(p.data) for p in parts if p.kind == TOOL_RESULT)
    total = sum(len(p.data) for p in jsonl)
    for part in jsonl:
        share = max(1, room * len(part.data) // total)
        try:
            result = fit_to_limit(part.data, share, agent)
        except ValueError as exc:
            raise BrokenSegment(f"the segment cannot be reduced to {limit:,} bytes: {exc}") from None
        part.data = result.data
        part.truncated_bytes, part.truncated_outputs = result.truncated_bytes, result.truncated_outputs
    fitted = sum(len(p.data) for p in parts)
    if fitted > limit:
        raise BrokenSegment(f"the segment is {fitted:,} bytes even with tool outputs truncated; limit {limit:,}")
    log.info(f"fitted a {total:,}-byte segment into {fitted:,} bytes (limit {limit:,})")


def build_metadata(intent: Intent, parts: list[Part], agent: Agent | None = None) -> dict[str, Any]:
    """The `metadata` part of the upload (docs/design.md §3)."""
    agent = agent or agents.get(intent.agent)
    start = intent.start_offset
    data: dict[str, Any] = {
        "kind": intent.kind,
        "feature_branch": intent.feature_branch,
        "commit_hash": intent.commit_hash,
        "task_id": intent.task_id,
        "status": intent.status if intent.kind == "task" else None,
        "agent": agent.name,
        "agent_version": agent.version_of(parts[0].data),
        "agent_session_id": intent.agent_session_id or "",
        "start_offset": start,
        "end_offset": intent.end_offset,
        "previous_end_offset": start if start and intent.kind != "task" else None,
        "captured_at": _iso(intent.captured_at or time.time()),
        "redaction": _merged(p.redaction for p in parts),
        "subagents": _subagent_offsets(intent, parts),
        "tool_results": [
            {"name": p.name, "bytes": p.original_size, "truncated_bytes": p.truncated_bytes}
            for p in parts
            if p.kind == TOOL_RESULT
        ]
        or None,
    }
    data.update(_commit_facts(intent))
    data["files_touched"] = files_touched(intent, parts, agent, data.get("files_touched") or []) or None
    return {key: value for key, value in data.items() if value is not None}


def files_touched(intent: Intent, parts: list[Part], agent: Agent, committed: list[str]) -> list[str]:
    """The commit's paths, then the files the conversation's tool calls wrote (sub-agents too),
    every one relative to the repository root; outside it `<outside>/<name>` (`core.repopaths`)."""
    called: list[str] = []
    for part in parts:
        if part.kind in (MAIN, SUBAGENT):
            try:
                called += agent.format.parse(part.data).files_touched
            except Exception:  # a segment the parser cannot read still uploads; the server parses it too
                log.exception(f"reading the tool calls of {part.name} failed")
    root = intent.repo
    if not root:
        return repopaths.normalise([*committed, *called])
    cwd = intent.cwd or root
    found = [*committed, *(repopaths.relative(p, root, cwd) for p in called)]
    return list(dict.fromkeys(found))


def _subagent_offsets(intent: Intent, parts: list[Part]) -> list[dict[str, Any]]:
    where = {p.name: p.path for p in parts if p.kind == SUBAGENT}
    return [
        {
            "agent_id": s.agent_id,
            "start_offset": s.start_offset,
            "end_offset": s.end_offset,
            "path": where.get(s.agent_id) or f"subagents/agent-{s.agent_id}.jsonl",
        }
        for s in intent.subagents
    ]


def _commit_facts(intent: Intent) -> dict[str, Any]:
    """Message, diff stat, files and patch id of a checkpoint's commit (or of a commit no hook
    captured, `attribution_capture.attributed`), and what it amends."""
    sha, repo = intent.commit_hash, intent.repo
    if not attribution_capture.attributed(intent) or not sha or not repo or not os.path.isdir(repo):
        return {}
    try:
        facts = gitmeta.commit_facts(repo, sha)
        facts["amends"] = gitmeta.amended(repo, sha, intent.previous_head)
    except gitmeta.GitError as exc:
        log.warning(f"commit facts of {sha[:10]} unavailable: {exc}")
        return {}
    return facts


def idempotency_key(intent: Intent) -> str:
    """Stable across retries and re-preparation: the same captured range is the same upload."""
    fields = [intent.agent_session_id, intent.start_offset, intent.end_offset, intent.commit_hash]
    fields += [intent.kind, intent.task_id]
    return "sl1-" + hashlib.sha256(json.dumps(fields).encode()).hexdigest()[:48]


def _local(intent: Intent, parts: list[Part], limit: int) -> dict[str, Any]:
    """What stays on this machine: changed lines (fork drops their thinking signatures), counts."""
    return {
        "idempotency_key": idempotency_key(intent),
        "limit": limit,
        "files": [p.filename for p in parts],
        "parts": [{"file": p.filename, "field": p.field, "path": p.path} for p in parts],
        "changed_lines": {p.name: p.changed_lines for p in parts if p.changed_lines},
        "slimmed": {p.name: p.slimmed for p in parts},
        "truncated": {p.name: [p.truncated_bytes, p.truncated_outputs] for p in parts if p.truncated_outputs},
        "raw_bytes": sum(len(p.data) for p in parts),
        "remote": _remote(intent.repo),
        "prepared_at": time.time(),
    }


def _remote(repo: str | None) -> str | None:
    if not repo or not os.path.isdir(repo):
        return None
    try:
        return gitmeta.remote_url(repo)
    except gitmeta.GitError:
        return None


def _merged(counts: Any) -> dict[str, int]:
    total: dict[str, int] = {}
    for mapping in counts:
        for kind, n in mapping.items():
            total[kind] = total.get(kind, 0) + int(n)
    return total


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")

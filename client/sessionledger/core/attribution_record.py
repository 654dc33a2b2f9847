"""The Agent Trace record of a commit's attribution: files → conversations → ranges, built from the
matching in `sessionledger.core.attribution`, and the permalinks its conversations carry.

One conversation per step (tool call) whose `url` is the message's permalink on the server, plus one
`human` conversation per file; implementation data sits under `metadata["dev.sessionledger"]`
(docs/attribution.md). Standard library only: the server imports it too.
"""

from __future__ import annotations

import hashlib
import uuid as uuid_mod
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sessionledger.core.attribution import SPEC_VERSION, VENDOR, Line, Step

PROVIDERS = {"claude-code": "anthropic", "codex": "openai", "gemini": "google"}


def model_id(model: str, agent: str) -> str:
    """models.dev convention: `provider/model` (`anthropic/claude-opus-4-6`)."""
    if not model or "/" in model:
        return model[:250]
    provider = PROVIDERS.get(agent)
    return f"{provider}/{model}"[:250] if provider else model[:250]


def message_url(base: str, project: str, message_uuid: str) -> str:
    return f"{base.rstrip('/')}/p/{project}/m/{message_uuid}"


def build_record(
    *,
    revision: str,
    added: Mapping[str, list[Line]],
    owners: Mapping[str, list[Step | None]],
    line_counts: Mapping[str, int],
    agent: str,
    tool_version: str = "",
    base_url: str = "",
    project: str = "",
) -> dict[str, Any]:
    """The Agent Trace record of one commit. Without `base_url` the conversations carry no
    `url` yet (`with_urls` adds them once the project is known, when the segment is sent)."""
    files, steps = [], {}
    for path, lines in added.items():
        conversations = _conversations(lines, owners.get(path) or [None] * len(lines), agent)
        files.append({"path": path, "conversations": conversations})
        for step in owners.get(path) or []:
            if step is not None:
                steps[step.uuid] = _step_facts(step)
    ai = sum(1 for values in owners.values() for s in values if s is not None)
    total = sum(len(lines) for lines in added.values())
    record: dict[str, Any] = {
        "version": SPEC_VERSION,
        "id": str(uuid_mod.uuid4()),
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "vcs": {"type": "git", "revision": revision},
        "tool": {"name": "sessionledger", "version": tool_version or "0"},
        "files": files,
        "metadata": {
            VENDOR: {
                "agent": agent,
                "steps": steps,
                "line_counts": {path: int(line_counts.get(path, 0)) for path in added},
                "line_hashes": {path: [[ln.number, ln.hash] for ln in lines] for path, lines in added.items()},
                "added_lines": total,
                "ai_lines": ai,
                "human_lines": total - ai,
            }
        },
    }
    return with_urls(record, base_url, project) if base_url and project else record


def _step_facts(step: Step) -> dict[str, Any]:
    return {"tool": step.tool, "turn": step.turn, "model": step.model, "prompt": step.prompt}


def _conversations(lines: list[Line], owners: list[Step | None], agent: str) -> list[dict[str, Any]]:
    by_step: dict[str, list[list[Line]]] = {}
    models: dict[str, str] = {}
    previous: Step | bool | None = False
    for line, owner in zip(lines, owners, strict=True):
        key = owner.uuid if owner is not None else ""
        runs = by_step.setdefault(key, [])
        contiguous = previous is not False and previous is owner and runs and runs[-1][-1].number + 1 == line.number
        if contiguous:
            runs[-1].append(line)
        else:
            runs.append([line])
        if owner is not None:
            models[key] = owner.model
        previous = owner
    conversations = []
    for key, runs in by_step.items():
        contributor: dict[str, Any] = {"type": "ai" if key else "human"}
        if key and models.get(key):
            contributor["model_id"] = model_id(models[key], agent)
        conversation: dict[str, Any] = {"contributor": contributor, "ranges": [_range(run) for run in runs]}
        if key:
            conversation[f"{VENDOR}.step"] = key
        conversations.append(conversation)
    return conversations


def _range(run: list[Line]) -> dict[str, Any]:
    """`content_hash`: over the lines' key hashes, so the server can compute it without the text."""
    digest = hashlib.sha256(" ".join(line.hash for line in run).encode()).hexdigest()[:32]
    return {"start_line": run[0].number, "end_line": run[-1].number, "content_hash": f"sha256:{digest}"}


def with_urls(record: dict[str, Any], base_url: str, project: str) -> dict[str, Any]:
    """Each AI conversation's `url`: the permalink of the message that wrote its lines."""
    steps = record.get("metadata", {}).get(VENDOR, {}).get("steps", {})
    for entry in record.get("files", []):
        for conversation in entry.get("conversations", []):
            step = conversation.get(f"{VENDOR}.step")
            if step:
                conversation["url"] = message_url(base_url, project, step)
                prompt = (steps.get(step) or {}).get("prompt")
                if prompt:
                    conversation["related"] = [{"type": "prompt", "url": message_url(base_url, project, prompt)}]
    return record


def step_of(conversation: Mapping[str, Any]) -> str:
    value = conversation.get(f"{VENDOR}.step")
    return value if isinstance(value, str) else ""

"""The parts of a captured segment beyond its transcript: sub-agent transcripts and persisted
tool outputs (docs/client.md "Every byte of a session").

Both are stored as blobs listed in ``Session.subagents``: a sub-agent entry is
``{agent_id, key, raw_size_bytes, start_offset, end_offset, path}`` (``path`` says where the
file lived next to the session: ``subagents/agent-<id>.jsonl`` from Claude Code 2.1.2,
``agent-<id>.jsonl`` before), a tool output ``{kind: "tool_result", name, key, raw_size_bytes}``
(Claude Code's ``<session>/tool-results/<name>``). Keeping them in one list means retention and
the stitched transcript's byte accounting need no change. Names and paths are client-supplied:
they are checked against tight patterns and never reach a storage key or a file system here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from projects.errors import DomainError
from sessions_app import blobs

if TYPE_CHECKING:
    from sessions_app.models import Session

TOOL_RESULT = "tool_result"
TOOL_RESULTS_DIR = "tool-results"
MAX_TOOL_RESULTS = 1000
NAME_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$"
SUBAGENT_PATH_PATTERN = r"^(subagents/)?agent-[A-Za-z0-9_.-]{1,100}\.jsonl$"
_NAME = re.compile(NAME_PATTERN)


@dataclass(frozen=True)
class Upload:
    """One gzip part of the request: the transcript or a sub-agent transcript."""

    stream: IO[bytes]
    size: int
    agent_id: str = ""  # a sub-agent's id, or a persisted tool output's name
    kind: str = "subagent"  # or TOOL_RESULT


def tool_result_uploads(files: list[Any]) -> list[Upload]:
    """The ``tool_result`` parts of an upload (file name = the output's name + ``.gz``)."""
    if len(files) > MAX_TOOL_RESULTS:
        raise DomainError("invalid", f"At most {MAX_TOOL_RESULTS} tool_result parts.", field="tool_result")
    uploads = []
    for upload in files:
        name = (upload.name or "").rsplit("/", 1)[-1].removesuffix(".gz")
        if not _NAME.match(name) or name in (".", ".."):
            raise DomainError("invalid", "A tool_result part's file name is <name>.gz.", field="tool_result")
        uploads.append(Upload(upload, upload.size, name, kind=TOOL_RESULT))
    return uploads


def stored_entry(part: Upload, key: str, size: int, offsets: dict[str, Any]) -> dict[str, Any]:
    """The ``Session.subagents`` entry of one stored part."""
    if part.kind == TOOL_RESULT:
        return {"kind": TOOL_RESULT, "name": part.agent_id, "key": key, "raw_size_bytes": size}
    return {
        "agent_id": part.agent_id,
        "key": key,
        "raw_size_bytes": size,
        "start_offset": offsets.get("start_offset"),
        "end_offset": offsets.get("end_offset"),
        "path": offsets.get("path") or f"subagents/agent-{part.agent_id}.jsonl",
    }


def is_tool_result(entry: dict[str, Any]) -> bool:
    return entry.get("kind") == TOOL_RESULT


def subagent_entries(session: Session) -> list[dict[str, Any]]:
    return [entry for entry in session.subagents or [] if not is_tool_result(entry)]


def tool_result_entries(session: Session) -> list[dict[str, Any]]:
    return [entry for entry in session.subagents or [] if is_tool_result(entry)]


def parser_inputs(session: Session) -> dict[str, dict[str, bytes]]:
    """``subagents`` and ``tool_outputs`` for ``parse_transcript``, read from storage."""
    return {
        "subagents": {e["agent_id"]: blobs.gunzip(blobs.get(e["key"])) for e in subagent_entries(session)},
        "tool_outputs": {e["name"]: blobs.gunzip(blobs.get(e["key"])) for e in tool_result_entries(session)},
    }

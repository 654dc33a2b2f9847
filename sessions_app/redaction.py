"""The server's second wall: redact what the worker derives from, before it derives anything.

The client redacts before upload (client/sessionledger/core/redaction); an old or misconfigured client
may not have. So the worker runs the same redactor (imported from the client package, default
rules) over the transcript, sub-agent transcripts and persisted tool outputs it parses and over the
commit message, and only then derives the
content document, title, summary, digest, search vector and snippets: none of them can hold a
secret the rules recognise. What it found is stored per rule in ``Session.server_redaction`` and
shown on the session page. Where it found something, the stored blobs it read (raw transcript,
sub-agents, tool outputs) are replaced by their redacted bytes, so the raw download, the stitched
transcript and fork hold no more than the page does (docs/redaction.md). A later reprocess then
finds nothing and keeps the counts already recorded.
"""

from __future__ import annotations

import gzip
from collections import Counter

from sessionledger.core.redaction import default_redactor
from sessions_app import blobs, parts
from sessions_app.models import Session


def second_wall(
    *, session: Session, raw: bytes, inputs: dict[str, dict[str, bytes]]
) -> tuple[bytes, dict[str, dict[str, bytes]]]:
    """Redacted (transcript, parser inputs): sub-agent transcripts are JSONL, persisted tool outputs
    (``tool_outputs``) plain text. The session's commit message is redacted and the counts per rule
    recorded, both on the row and on ``session`` for what the caller derives next."""
    redactor = default_redactor()
    counts: Counter[str] = Counter()
    result = redactor.redact_bytes(raw)
    counts.update(result.counts)
    cleaned: dict[str, dict[str, bytes]] = {}
    for name, files in inputs.items():
        redact = redactor.redact_bytes if name == "subagents" else redactor.redact_plain
        cleaned[name] = {}
        for key, data in files.items():
            part = redact(data)
            counts.update(part.counts)
            cleaned[name][key] = part.data
    message, message_counts = redactor.redact_text(session.commit_message or "")
    counts.update(message_counts)
    found = dict(sorted(counts.items()))
    if found:
        _store_redacted(session, raw, result.data, inputs, cleaned)
    changed: dict[str, object] = (
        {"server_redaction": found} if found and found != (session.server_redaction or {}) else {}
    )
    if message != (session.commit_message or ""):
        changed["commit_message"] = message
    if changed:
        Session.objects.filter(pk=session.pk).update(**changed)
        for field, value in changed.items():
            setattr(session, field, value)
    return result.data, cleaned


def _store_redacted(
    session: Session,
    raw: bytes,
    redacted: bytes,
    inputs: dict[str, dict[str, bytes]],
    cleaned: dict[str, dict[str, bytes]],
) -> None:
    """Overwrite each stored blob whose bytes the wall changed (same keys: nothing else moves)."""
    keys = {
        "subagents": {entry["agent_id"]: entry["key"] for entry in parts.subagent_entries(session)},
        "tool_outputs": {entry["name"]: entry["key"] for entry in parts.tool_result_entries(session)},
    }
    if redacted != raw:
        blobs.put(session.raw_storage_key, gzip.compress(redacted))
    for name, files in cleaned.items():
        for key, data in files.items():
            if data != inputs[name][key]:
                blobs.put(keys[name][key], gzip.compress(data))

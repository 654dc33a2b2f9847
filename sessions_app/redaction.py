"""The server's second wall: redact what the worker derives from, before it derives anything.

The client redacts before upload (client/sessionledger/redaction); an old or misconfigured client
may not have. So the worker runs the same redactor (imported from the client package, default
rules) over the transcript, sub-agent transcripts and persisted tool outputs it parses and over the
commit message, and only then derives the
content document, title, summary, digest, search vector and snippets: none of them can hold a
secret the rules recognise. What it found is stored per rule in ``Session.server_redaction`` and
shown on the session page. The raw blob stays as uploaded (see docs/redaction.md).
"""

from __future__ import annotations

from collections import Counter

from sessionledger.redaction import default_redactor
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
    changed = {"server_redaction": found} if found != (session.server_redaction or {}) else {}
    if message != (session.commit_message or ""):
        changed["commit_message"] = message
    if changed:
        Session.objects.filter(pk=session.pk).update(**changed)
        for field, value in changed.items():
            setattr(session, field, value)
    return result.data, cleaned

"""Gemini CLI chat recordings replayed into the conversation they describe (docs/agents.md "Gemini CLI").

A JSONL recording is replayed the way Gemini CLI loads it (upserts by `id`, `$set`, `$rewindTo`);
a pre-v0.39 JSON document is read whole, and `legacy_messages` finds where each of its messages
starts for the cuts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .jsonlines import scan

Record = dict[str, Any]

_WS = re.compile(r"[ \t\n\r]*")


@dataclass
class Conversation:
    """The conversation a recording describes, as Gemini CLI would load it."""

    meta: dict[str, Any] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    records: dict[str, Record] = field(default_factory=dict)
    position: dict[str, int] = field(default_factory=dict)
    legacy: bool = False
    lines: int = 0
    skipped: int = 0
    truncated_bytes: int = 0
    ignored: dict[str, int] = field(default_factory=dict)
    rewound: int = 0

    def upsert(self, rec: Record) -> None:
        key = rec["id"]
        if key not in self.records:
            self.position[key] = len(self.order)
            self.order.append(key)
        self.records[key] = rec

    def rewind(self, key: Any) -> None:
        """Drop `key` and every later message; an unknown id drops them all (as Gemini does).

        Only the tail is ever removed, so the positions of the kept messages stay right.
        """
        at = self.position.get(key, 0) if isinstance(key, str) else 0
        for gone in self.order[at:]:
            del self.records[gone], self.position[gone]
        self.rewound += len(self.order) - at
        del self.order[at:]

    def replace_all(self, messages: list[Any]) -> None:
        self.order, self.records, self.position = [], {}, {}
        for msg in messages:
            if is_message(msg):
                self.upsert(msg)

    def messages(self) -> list[Record]:
        return [self.records[key] for key in self.order]


def is_message(rec: Any) -> bool:
    return isinstance(rec, dict) and isinstance(rec.get("id"), str)


def _is_metadata(rec: Record) -> bool:
    return isinstance(rec.get("sessionId"), str) and isinstance(rec.get("projectHash"), str)


def legacy_document(raw: bytes) -> Record | None:
    """The pre-v0.39 single JSON document, or None when `raw` is JSONL (or broken)."""
    head = raw.lstrip()[:1]
    first = raw.split(b"\n", 1)[0].strip()
    if head != b"{" or (first.startswith(b"{") and first.endswith(b"}")):
        return None  # a JSONL line is a whole object on its first line
    try:
        doc = json.loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) and isinstance(doc.get("messages"), list) else None


def replay(raw: bytes) -> Conversation:
    doc = legacy_document(raw)
    if doc is not None:
        conv = Conversation(legacy=True, lines=1)
        conv.meta = {k: v for k, v in doc.items() if k != "messages"}
        conv.replace_all(doc["messages"])
        return conv
    scanned = scan(raw)
    conv = Conversation(lines=scanned.count, skipped=scanned.skipped, truncated_bytes=scanned.truncated_bytes)
    for line in scanned.lines:
        if line.rec is not None:
            _apply(conv, line.rec)
    return conv


def _apply(conv: Conversation, rec: Record) -> None:
    """One recorded line, in Gemini CLI's own order of checks (loadConversationRecord)."""
    if isinstance(rec.get("$rewindTo"), str):
        conv.rewind(rec["$rewindTo"])
    elif is_message(rec):
        conv.upsert(rec)
    elif isinstance(rec.get("$set"), dict):
        update = rec["$set"]
        if isinstance(update.get("messages"), list):
            conv.replace_all(update["messages"])
        conv.meta.update({k: v for k, v in update.items() if k != "messages"})
    elif _is_metadata(rec):
        conv.meta.update({k: v for k, v in rec.items() if k != "messages"})
        if isinstance(rec.get("messages"), list):
            conv.replace_all(rec["messages"])
    else:
        conv.ignored["unknown"] = conv.ignored.get("unknown", 0) + 1


def legacy_messages(raw: bytes) -> list[tuple[int, Record]]:
    """(byte offset, message) for each entry of a legacy document's `messages` array.

    Walks the top-level object with the standard decoder (each value decoded once), so finding
    where every message starts stays linear in the document.
    """
    text = raw.decode("utf-8", "surrogateescape")
    decoder = json.JSONDecoder()
    found: list[tuple[int, int]] = []
    values: list[Any] = []
    try:
        pos = _skip(text, 0)
        if text[pos : pos + 1] != "{":
            return []
        pos = _skip(text, pos + 1)
        while pos < len(text) and text[pos] != "}":
            key, pos = decoder.raw_decode(text, pos)
            pos = _skip(text, _skip(text, pos) + 1)  # past ':'
            if key == "messages" and text[pos : pos + 1] == "[":
                pos = _walk_array(text, pos + 1, decoder, found, values)
            else:
                _, pos = decoder.raw_decode(text, pos)
            pos = _skip(text, pos)
            if text[pos : pos + 1] == ",":
                pos = _skip(text, pos + 1)
    except (ValueError, RecursionError, IndexError):
        return []
    return [(byte, rec) for (byte, _), rec in zip(_byte_offsets(text, found), values, strict=True) if is_message(rec)]


def _walk_array(text: str, pos: int, decoder: json.JSONDecoder, found: list[tuple[int, int]], values: list[Any]) -> int:
    pos = _skip(text, pos)
    while text[pos] != "]":
        value, end = decoder.raw_decode(text, pos)
        found.append((pos, end))
        values.append(value)
        pos = _skip(text, end)
        if text[pos] == ",":
            pos = _skip(text, pos + 1)
    return pos + 1


def _skip(text: str, pos: int) -> int:
    match = _WS.match(text, pos)
    return match.end() if match else pos


def _byte_offsets(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Character offsets -> byte offsets, encoding each stretch between them once."""
    result, chars, size = [], 0, 0
    for start, end in spans:
        size += len(text[chars:start].encode("utf-8", "surrogateescape"))
        chars = start
        result.append((size, end))
    return result

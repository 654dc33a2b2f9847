"""Find the line of a file at a commit in Agent Trace records: which step wrote it.

Used by `blame` and `why` on the client and by the server's `why` endpoint. A record whose
revision is the blamed commit answers by line number (checked against the line's hash). A
commit that only reaches records through a relink (rebase, squash) has other line numbers:
there the line is found by its hash among the record's added lines — same path first, then
the nearest line number, then any path (code moved between files).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sessionledger.core.attribution import VENDOR
from sessionledger.core.attribution_record import step_of


@dataclass(frozen=True)
class Hit:
    contributor: str  # "ai" or "human"
    path: str
    line: int  # in the record's revision
    revision: str
    step: str = ""  # the message uuid of the tool call
    url: str = ""
    model: str = ""
    turn: int | None = None
    tool: str = ""
    prompt: str = ""  # the prompt message's uuid
    session: str = ""  # the session id (server records carry it)

    @property
    def short_step(self) -> str:
        """`t3·1a2b3c4d`: the prompt index and the start of the message uuid."""
        if self.contributor != "ai":
            return ""
        turn = f"t{self.turn + 1}" if isinstance(self.turn, int) else "t?"
        return f"{turn}·{self.step[:8]}"


def find(records: Iterable[Mapping[str, Any]], path: str, line: int, line_hash: str, revision: str = "") -> Hit | None:
    records = [r for r in records if isinstance(r, Mapping)]
    for record in records:
        if (revision and _revision(record).startswith(revision[:40])) or not revision:
            hit = _at(record, path, line, line_hash)
            if hit is not None:
                return hit
    return _by_hash(records, path, line, line_hash)


def _revision(record: Mapping[str, Any]) -> str:
    vcs = record.get("vcs")
    return str(vcs.get("revision") or "") if isinstance(vcs, Mapping) else ""


def _vendor(record: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = record.get("metadata")
    found = metadata.get(VENDOR) if isinstance(metadata, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def _all_hashes(record: Mapping[str, Any]) -> Mapping[str, Any]:
    found = _vendor(record).get("line_hashes")
    return found if isinstance(found, Mapping) else {}


def _hashes(record: Mapping[str, Any], path: str) -> dict[int, str]:
    pairs = _all_hashes(record).get(path)
    pairs = pairs if isinstance(pairs, list) else []
    return {int(p[0]): str(p[1]) for p in pairs if isinstance(p, list) and len(p) == 2 and isinstance(p[0], int)}


def _at(record: Mapping[str, Any], path: str, line: int, line_hash: str) -> Hit | None:
    known = _hashes(record, path).get(line)
    if line_hash and known and known != line_hash:
        return None  # the line changed since: not this record's line
    files = record.get("files")
    for entry in files if isinstance(files, list) else []:
        if isinstance(entry, Mapping) and entry.get("path") == path:
            return _in_file(record, entry, line)
    return None


def _in_file(record: Mapping[str, Any], entry: Mapping[str, Any], line: int) -> Hit | None:
    for conversation in _list(entry.get("conversations")):
        for span in _list(conversation.get("ranges")) if isinstance(conversation, Mapping) else []:
            if isinstance(span, Mapping) and _int(span.get("start_line"), 0) <= line <= _int(span.get("end_line"), -1):
                return _hit(record, str(entry.get("path")), line, conversation)
    return None


def _by_hash(records: list[Mapping[str, Any]], path: str, line: int, line_hash: str) -> Hit | None:
    if not line_hash:
        return None
    candidates: list[tuple[int, int, Mapping[str, Any], str, int]] = []
    for record in records:
        for where in _all_hashes(record):
            for number, value in _hashes(record, where).items():
                if value == line_hash:
                    candidates.append((where != path, abs(number - line), record, where, number))
    for _, _, record, where, number in sorted(candidates, key=lambda c: (c[0], c[1])):
        hit = _at(record, where, number, line_hash)
        if hit is not None:
            return hit
    return None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) else default


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _hit(record: Mapping[str, Any], path: str, line: int, conversation: Mapping[str, Any]) -> Hit:
    contributor = _mapping(conversation.get("contributor"))
    step = step_of(conversation)
    facts = _mapping(_mapping(_vendor(record).get("steps")).get(step))
    session = _mapping(_vendor(record).get("session"))
    return Hit(
        contributor=str(contributor.get("type") or "unknown"),
        path=path,
        line=line,
        revision=_revision(record),
        step=step,
        url=str(conversation.get("url") or ""),
        model=str(contributor.get("model_id") or ""),
        turn=found if isinstance(found := facts.get("turn"), int) else None,
        tool=str(facts.get("tool") or ""),
        prompt=str(facts.get("prompt") or ""),
        session=str(facts.get("session") or session.get("id") or ""),
    )

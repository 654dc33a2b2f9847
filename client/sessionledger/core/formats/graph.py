"""Order records along the parentUuid graph (docs/claude-code.md §1.6).

The graph, not the file, is authoritative; but every branch must survive (rewinds, progress
side branches, parallel tool results) and readers expect siblings in the order they were
written. So the order is the topological order that stays closest to file order: a record
comes after its parent, and among the records whose parent has been emitted the earliest
line in the file goes first. For the usual file (parents always earlier) that is exactly
file order, which is also the fallback whenever the graph is incomplete or cyclic.
"""

from __future__ import annotations

import heapq
from typing import Any

Record = dict[str, Any]


def dedupe(records: list[Record]) -> tuple[list[Record], int]:
    """Drop later copies of a uuid (resume replay rewrites the same lines); keep the first."""
    seen: set[str] = set()
    unique: list[Record] = []
    for rec in records:
        uuid = rec.get("uuid")
        if isinstance(uuid, str):
            if uuid in seen:
                continue
            seen.add(uuid)
        unique.append(rec)
    return unique, len(records) - len(unique)


def chain_order(records: list[Record]) -> list[Record]:
    """Parents before children, siblings and roots by file order (see module docstring)."""
    parents = _parent_positions(records)
    if all(p < i for i, p in enumerate(parents)):
        return records
    return [records[i] for i in _topological(parents)]


def _parent_positions(records: list[Record]) -> list[int]:
    """File position of each record's parent, or -1 for a root.

    A parent missing from these bytes (a segment starts mid-file) makes a root; so does a
    compaction boundary unless its `logicalParentUuid` is present, which links the new
    root after the pre-compaction content.
    """
    position = {rec["uuid"]: i for i, rec in enumerate(records) if isinstance(rec.get("uuid"), str)}
    parents: list[int] = []
    for i, rec in enumerate(records):
        parent = _lookup(position, rec.get("parentUuid"))
        if parent < 0:
            parent = _lookup(position, rec.get("logicalParentUuid"))
        parents.append(-1 if parent == i else parent)
    return parents


def _lookup(position: dict[str, int], uuid: Any) -> int:
    return position.get(uuid, -1) if isinstance(uuid, str) else -1


def _topological(parents: list[int]) -> list[int]:
    children: list[list[int]] = [[] for _ in parents]
    ready = []
    for i, parent in enumerate(parents):
        if parent < 0:
            ready.append(i)
        else:
            children[parent].append(i)
    order = _drain(ready, children)
    if len(order) < len(parents):  # a cycle: keep the stragglers in file order
        emitted = set(order)
        order.extend(i for i in range(len(parents)) if i not in emitted)
    return order


def _drain(ready: list[int], children: list[list[int]]) -> list[int]:
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for child in children[i]:
            heapq.heappush(ready, child)
    return order

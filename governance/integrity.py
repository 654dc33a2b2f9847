"""Tamper evidence for the audit trail (docs/security.md "Audit trail").

Each ``projects_auditevent`` row carries the hash of its predecessor in its chain and of its own
content (the trigger of migration ``governance/0001``). ``verify`` recomputes every hash with the same
SQL function and walks each chain in id order, naming each row that was edited, the place where rows
were removed, and rows whose position changed. ``prune`` is retention's way to remove a chain's oldest
rows without breaking it: as the owner, with the new start recorded as an anchor.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db import connection, transaction

from governance.dbroles import AUDIT_TABLE, owner_connection

LOCK_SPACE = 7_340_001  # the trigger's advisory-lock namespace (migration governance/0001)


@dataclass(frozen=True)
class Finding:
    kind: str  # "edited", "deleted" or "reordered"
    event_id: int
    chain: str  # the project's id, or "" for deployment-wide events

    def __str__(self) -> str:
        where = f"project {self.chain}" if self.chain else "deployment-wide events"
        if self.kind == "deleted":
            return f"deleted: row(s) missing before event {self.event_id} ({where})"
        return f"{self.kind}: event {self.event_id} ({where})"


_ROWS = f"""
SELECT e.id, coalesce(e.project_id::text, ''), e.prev_hash, e.hash,
       e.hash IS NOT DISTINCT FROM audit_row_hash(e.prev_hash, e) AS content_intact,
       e.seal IS NULL OR e.personal_digest IS NOT DISTINCT FROM
           audit_personal_digest(e.seal, e.actor_email, e.target, e.ip, e.user_agent) AS personal_intact
FROM {AUDIT_TABLE} AS e ORDER BY e.id"""


def verify() -> list[Finding]:
    """Every break in every chain, oldest first (as the owner: it must see every project's rows)."""
    with owner_connection().cursor() as cursor:
        cursor.execute("SELECT chain, hash FROM governance_auditanchor")
        anchors = dict(cursor.fetchall())
        cursor.execute(_ROWS)
        rows = cursor.fetchall()
    chains: dict[str, list[tuple[int, str, str, bool]]] = {}
    for event_id, chain, prev_hash, hash_, content_intact, personal_intact in rows:
        chains.setdefault(chain, []).append(
            (event_id, prev_hash or "", hash_ or "", content_intact and personal_intact)
        )
    findings = [f for chain, links in chains.items() for f in _walk(chain, links, anchors.get(chain, ""))]
    return sorted(findings, key=lambda f: f.event_id)


def _walk(chain: str, links: list[tuple[int, str, str, bool]], anchor: str) -> list[Finding]:
    findings = [Finding("edited", event_id, chain) for event_id, _, _, intact in links if not intact]
    position = {hash_: index for index, (_, _, hash_, _) in enumerate(links)}
    expected = anchor
    for index, (event_id, prev_hash, hash_, _) in enumerate(links):
        if prev_hash != expected:
            if prev_hash == anchor:  # it began the chain and is no longer first
                findings.append(Finding("reordered", event_id, chain))
            elif prev_hash not in position:  # its predecessor is gone: rows were removed before it
                findings.append(Finding("deleted", event_id, chain))
            elif position[prev_hash] > index:  # it now comes before the event it followed
                findings.append(Finding("reordered", event_id, chain))
            # else: a row moved away from before this one, named above
        expected = hash_
    return findings


def prune(*, project_id: object, before: dt.datetime) -> int:
    """Remove a project's events older than ``before`` — the chain's oldest rows, so it stays whole —
    through the owner login, recording the last removed row's hash as the chain's anchor. For retention
    (a command or a periodic task: the owner connection is its own transaction)."""
    chain = str(project_id) if project_id else ""
    owner = owner_connection()
    with transaction.atomic(using=owner.alias), owner.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", [LOCK_SPACE, chain])
        cursor.execute(
            f"SELECT id, hash FROM {AUDIT_TABLE} WHERE coalesce(project_id::text, '') = %s AND at < %s"
            " ORDER BY id DESC LIMIT 1",
            [chain, before],
        )
        last = cursor.fetchone()
        if last is None:
            return 0
        cursor.execute(
            f"DELETE FROM {AUDIT_TABLE} WHERE coalesce(project_id::text, '') = %s AND id <= %s", [chain, last[0]]
        )
        removed: int = cursor.rowcount
        cursor.execute(
            "INSERT INTO governance_auditanchor (chain, hash, up_to_id, at) VALUES (%s, %s, %s, now())"
            " ON CONFLICT (chain) DO UPDATE SET hash = excluded.hash, up_to_id = excluded.up_to_id, at = now()",
            [chain, last[1], last[0]],
        )
    return removed


def pseudonymise(*, user_id: int, email: str) -> int:
    """Erasure's change to the trail, on the caller's connection and transaction: the runtime login
    may not UPDATE audit rows, so it goes through the owner's narrow function (migration 0001)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT audit_pseudonymise(%s, %s)", [user_id, email])
        return int(cursor.fetchone()[0])

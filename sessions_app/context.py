"""The AI context digest (docs/design.md §6): the most relevant prior sessions, within a character budget.

Relevance: the same branch first, then sessions that touched the same files, then the project's
recent ones — team-wide, newest first within each group. Everything comes from row fields the
worker precomputed, so building a digest never reads a blob: each session's block, rendered when it
was processed (``Session.context_text``), is read in one statement for all groups and joined with
what may change since (the author's e-mail, why it was chosen) — docs/scaling.md "The context digest".
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import date
from typing import Any, NamedTuple

from django.contrib.auth import get_user_model
from django.db import connection

from projects.models import Project
from sessions_app.links import session_web_url_base
from sessions_app.models import Session, Status

DEFAULT_BUDGET, MAX_BUDGET = 8_000, 50_000
PER_GROUP = 20
USEFUL_STATUSES = (Status.COMPLETE, Status.REJECTED, Status.ABANDONED)
# (prompts kept, characters per prompt, characters of the last reply) from richest to leanest
DETAIL_LEVELS = ((8, 400, 600), (4, 200, 240), (1, 120, 0))
# The version of the texts the worker stores in ``Session.context_text`` (``context_texts``). Change
# it with DETAIL_LEVELS or a block's lines: stored texts of another version are rendered anew at read
# time, as for rows processed before the column existed, until ``reprocess`` renews them.
CONTEXT_FORMAT = 1


class ContextSession(NamedTuple):
    """What a digest shows of a session (docs/scaling.md "The context digest"): the few columns of the block's
    first line, and the rest of the block as the worker rendered it."""

    pk: uuid.UUID
    kind: str
    status: str
    commit_hash: str | None
    task_id: str | None
    day: date  # of captured_at, in UTC (psycopg decodes a date far more cheaply than a timestamptz)
    author_email: str | None
    texts: list[Any]  # CONTEXT_FORMAT, a block's lines after the first, per DETAIL_LEVELS, then the short block's


@dataclass(frozen=True)
class Candidate:
    session: ContextSession
    reason: str


@dataclass(frozen=True)
class Digest:
    text: str
    included: list[Candidate]
    budget: int
    links: str  # a session's web URL without its id (``links.session_web_url_base``)


def context_texts(*, title: str, commit_message: str, files_touched: list[str], digest: dict[str, Any]) -> list[Any]:
    """``[CONTEXT_FORMAT, lines per DETAIL_LEVELS…, short lines]``: everything of a session's block
    but its first line (kind, date, author, reason) and its last (the link), each line led by a
    newline; a level the same as the one before is ``None`` (often so: short sessions lose nothing
    at the second level). The worker stores it (``Session.context_text``); a digest only joins it.
    Plain text for the assistant, never HTML."""
    commit = f"\nCommit: {_cut(commit_message.splitlines()[0], 160)}" if commit_message else ""
    prompts = digest.get("prompts") or []
    last = digest.get("last_assistant_text") or ""
    texts: list[Any] = [CONTEXT_FORMAT]
    previous = None
    for kept, prompt_chars, reply_chars in DETAIL_LEVELS:
        lines = [f"\n- {_cut(p, prompt_chars)}" for p in prompts[:kept]]
        lines.append(commit)
        if files_touched and reply_chars:
            lines.append("\nFiles: " + _cut(", ".join(files_touched), 300))
        if last and reply_chars:
            lines.append(f"\nAssistant's last words: {_cut(last, reply_chars)}")
        text = "".join(lines)
        texts.append(None if text == previous else text)  # as rich as the level before: stored once
        previous = text
    short = [f"\nTitle: {_cut(title, 120)}" if title else "", commit]
    if files_touched:
        short.append("\nFiles: " + _cut(", ".join(files_touched), 200))
    texts.append("".join(short))
    return texts


def context_candidates(*, project: Project, branch: str = "", files: list[str] | None = None) -> list[Candidate]:
    """Up to PER_GROUP sessions per group, each session once (its first group), in one statement."""
    sql, params, reasons = candidates_statement(project=project, branch=branch, files=files)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    seen: set[object] = set()
    chosen: list[tuple[int, ContextSession]] = []
    for grp, pk, kind, status, commit_hash, task_id, day, email, stored in rows:
        if pk not in seen:
            seen.add(pk)
            texts = json.loads(stored) if isinstance(stored, str) else stored
            chosen.append((grp, ContextSession(pk, kind, status, commit_hash, task_id, day, email, texts)))
    stale = [session.pk for _, session in chosen if not _current(session.texts)]
    if stale:
        rendered = _render_now(project, stale)
        chosen = [
            (grp, session._replace(texts=rendered[session.pk]) if session.pk in rendered else session)
            for grp, session in chosen
            if session.pk in rendered or _current(session.texts)
        ]
    return [Candidate(session, reasons[grp]) for grp, session in chosen]


def candidates_statement(
    *, project: Project, branch: str = "", files: list[str] | None = None
) -> tuple[str, list[Any], list[str]]:
    """(SQL, parameters, reason per group): a UNION ALL of the groups' index reads, newest first
    (docs/scaling.md "The context digest"), with what a block shows of each row and its author's e-mail."""
    groups: list[tuple[str, str, Any]] = [("same branch", "s.feature_branch = %s", branch)] if branch else []
    if files:
        groups.append(("same files", "s.files_touched ?| %s", files))
    groups.append(("recent", "", None))
    parts: list[str] = []
    params: list[Any] = []
    for index, (_, condition, value) in enumerate(groups):
        # Every group names the project, as row-level security does (a digest is one project's).
        parts.append(
            f"(SELECT {index} AS grp, s.id, s.kind, s.status, s.commit_hash, s.task_id, s.captured_at, s.author_id,"
            f" s.context_text FROM {Session._meta.db_table} AS s WHERE s.project_id = %s AND s.status = ANY(%s)"
            f"{f' AND {condition}' if condition else ''} ORDER BY s.captured_at DESC, s.id DESC LIMIT {PER_GROUP})"
        )
        params += [project.pk, [status.value for status in USEFUL_STATUSES], *([value] if condition else [])]
    sql = (
        "SELECT c.grp, c.id, c.kind, c.status, c.commit_hash, c.task_id, (c.captured_at AT TIME ZONE 'UTC')::date,"
        " u.email, c.context_text"
        f" FROM ({' UNION ALL '.join(parts)}) AS c LEFT JOIN {get_user_model()._meta.db_table} AS u"
        " ON u.id = c.author_id ORDER BY c.grp, c.captured_at DESC, c.id DESC"
    )
    return sql, params, [reason for reason, _, _ in groups]


def _current(texts: Any) -> bool:
    return isinstance(texts, list) and len(texts) == len(DETAIL_LEVELS) + 2 and texts[0] == CONTEXT_FORMAT


def _render_now(project: Project, pks: list[uuid.UUID]) -> dict[uuid.UUID, list[Any]]:
    """The texts of sessions processed before ``context_text`` held them (or in another format)."""
    rows = Session.objects.filter(project=project, pk__in=pks).values_list(
        "pk", "title", "commit_message", "files_touched", "digest"
    )
    return {
        pk: context_texts(title=title, commit_message=message, files_touched=files or [], digest=digest or {})
        for pk, title, message, files, digest in rows
    }


def context_digest(
    *,
    project: Project,
    branch: str = "",
    files: list[str] | None = None,
    budget: int = DEFAULT_BUDGET,
    prompts: bool = True,
) -> Digest:
    """Render candidates richest-first, degrading detail so as many as possible fit; never over budget.

    ``prompts=False`` is the short digest (docs/client.md "SessionStart"): titles, commit
    messages and files, none of the developers' prompts.
    """
    budget = max(200, min(budget, MAX_BUDGET))
    header = _header(project, branch) if prompts else _short_header(project, branch)
    parts, included, used = [header], [], len(header)
    links = session_web_url_base(project)
    for candidate in context_candidates(project=project, branch=branch, files=files):
        room = budget - used
        block = _fitting_block(candidate, room, links) if prompts else _short_block(candidate, room)
        if block is None:
            break
        parts.append(block)
        included.append(candidate)
        used += len(block)
    return Digest(text="".join(parts), included=included, budget=budget, links=links)


def _header(project: Project, branch: str) -> str:
    where = f" (branch {branch})" if branch else ""
    return (
        f"Sessionledger: earlier conversations in {project.slug}{where}, newest first. "
        "Prompts are the developers' own words: honour their decisions and constraints.\n"
    )


def _short_header(project: Project, branch: str) -> str:
    where = f" (branch {branch})" if branch else ""
    return f"Sessionledger: earlier work in {project.slug}{where}, newest first.\n"


def _short_block(candidate: Candidate, room: int) -> str | None:
    session = candidate.session
    block = (
        f"\n## {_what(session)} · {session.day:%Y-%m-%d} · {candidate.reason}"
        f"{session.texts[-1]}\nMore: session {session.pk}\n"
    )
    return block if len(block) <= room else None


def _fitting_block(candidate: Candidate, room: int, links: str) -> str | None:
    """The richest of the session's blocks (DETAIL_LEVELS) that fits in ``room``. The author's
    e-mail is read now, not stored: it may have changed since the session was processed."""
    session = candidate.session
    author = session.author_email if session.author_email is not None else "unknown"
    first = f"\n## {_what(session)} · {session.day:%Y-%m-%d} · {author} · {candidate.reason}"
    last = f"\nMore: {links}{session.pk} (session {session.pk})\n"
    fixed = len(first) + len(last)
    for lines in session.texts[1 : 1 + len(DETAIL_LEVELS)]:
        if lines is not None and fixed + len(lines) <= room:  # None: the same as the level before
            return first + lines + last
    return None


def _what(session: ContextSession) -> str:
    if session.task_id and session.kind == "task":
        return f"task {session.task_id} ({session.status})"
    return f"{session.kind} {(session.commit_hash or '')[:10]}"


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def digest_sessions(digest: Digest) -> list[dict[str, Any]]:
    return [
        {
            "id": str(c.session.pk),
            "reason": c.reason,
            "commit_hash": c.session.commit_hash,
            "task_id": c.session.task_id,
            "web_url": f"{digest.links}{c.session.pk}",
        }
        for c in digest.included
    ]

"""The AI context digest (docs/design.md §6): the most relevant prior sessions, within a character budget.

Relevance: the same branch first, then sessions that touched the same files, then the project's
recent ones — team-wide, newest first within each group. Everything comes from row fields the
worker precomputed (``digest``), so building a digest never reads a blob.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from projects.models import Project
from sessions_app.links import session_web_url
from sessions_app.models import Session, Status

DEFAULT_BUDGET, MAX_BUDGET = 8_000, 50_000
PER_GROUP = 20
# What a digest shows of a session: the rest of the row (sizes, redaction counts, sub-agents, …)
# is neither read nor decoded — forty sessions per digest, on every SessionStart.
DIGEST_COLUMNS = (
    "id",
    "kind",
    "status",
    "commit_hash",
    "task_id",
    "feature_branch",
    "captured_at",
    "title",
    "commit_message",
    "files_touched",
    "digest",
    "author__email",
    "project__slug",
)
USEFUL_STATUSES = (Status.COMPLETE, Status.REJECTED, Status.ABANDONED)
# (prompts kept, characters per prompt, characters of the last reply) from richest to leanest
DETAIL_LEVELS = ((8, 400, 600), (4, 200, 240), (1, 120, 0))


@dataclass(frozen=True)
class Candidate:
    session: Session
    reason: str


@dataclass(frozen=True)
class Digest:
    text: str
    included: list[Candidate]
    budget: int


def context_candidates(*, project: Project, branch: str = "", files: list[str] | None = None) -> list[Candidate]:
    base = (
        Session.objects.filter(project=project, status__in=USEFUL_STATUSES)
        .select_related("author", "project")
        .only(*DIGEST_COLUMNS)
        .order_by("-captured_at", "-id")
    )
    groups: list[tuple[str, QuerySet[Session]]] = []
    if branch:
        groups.append(("same branch", base.filter(feature_branch=branch)))
    if files:
        groups.append(("same files", base.filter(files_touched__has_any_keys=files)))
    groups.append(("recent", base))
    seen: set[object] = set()
    chosen = []
    for reason, queryset in groups:
        for session in queryset[:PER_GROUP]:
            if session.pk not in seen:
                seen.add(session.pk)
                chosen.append(Candidate(session, reason))
    return chosen


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
    for candidate in context_candidates(project=project, branch=branch, files=files):
        block = _fitting_block(candidate, budget - used) if prompts else _short_block(candidate, budget - used)
        if block is None:
            break
        parts.append(block)
        included.append(candidate)
        used += len(block)
    return Digest(text="".join(parts), included=included, budget=budget)


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
    lines = [f"\n## {_what(session)} · {session.captured_at:%Y-%m-%d} · {candidate.reason}"]
    if session.title:
        lines.append(f"Title: {_cut(session.title, 120)}")
    if session.commit_message:
        lines.append(f"Commit: {_cut(session.commit_message.splitlines()[0], 160)}")
    if session.files_touched:
        lines.append("Files: " + _cut(", ".join(session.files_touched), 200))
    lines.append(f"More: session {session.pk}")
    block = "\n".join(lines) + "\n"
    return block if len(block) <= room else None


def _fitting_block(candidate: Candidate, room: int) -> str | None:
    for level in DETAIL_LEVELS:
        block = render_block(candidate, *level)
        if len(block) <= room:
            return block
    return None


def render_block(candidate: Candidate, prompts: int, prompt_chars: int, reply_chars: int) -> str:
    session = candidate.session
    lines = [
        f"\n## {_what(session)} · {session.captured_at:%Y-%m-%d} · "
        f"{session.author.email if session.author else 'unknown'} · {candidate.reason}"
    ]
    lines += [f"- {_cut(p, prompt_chars)}" for p in session.digest.get("prompts", [])[:prompts]]
    if session.commit_message:
        lines.append(f"Commit: {_cut(session.commit_message.splitlines()[0], 160)}")
    if session.files_touched and reply_chars:
        lines.append("Files: " + _cut(", ".join(session.files_touched), 300))
    last = session.digest.get("last_assistant_text", "")
    if last and reply_chars:
        lines.append(f"Assistant's last words: {_cut(last, reply_chars)}")
    lines.append(f"More: {session_web_url(session)} (session {session.pk})")
    return "\n".join(lines) + "\n"


def _what(session: Session) -> str:
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
            "web_url": session_web_url(c.session),
        }
        for c in digest.included
    ]

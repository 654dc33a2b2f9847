"""Reads of sessions: the API and the pages both call these (never each other)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.contrib.postgres.expressions import ArraySubquery
from django.contrib.postgres.search import SearchQuery
from django.core.exceptions import ValidationError
from django.db.models import OuterRef, Q, QuerySet, Subquery

from projects.errors import DomainError
from projects.models import Project
from sessions_app import blobs
from sessions_app.models import CommitLink, Session, TenantSession
from sessions_app.validation import search_text

COMMIT_PREFIX = re.compile(r"^[0-9a-fA-F]{7,40}$")


# What no list or single-session read shows (the page, the API's detail), of the session and of its
# previous segment alike: the search vector and text can weigh megabytes.
HEAVY_COLUMNS = ("search_vector", "search_text", "digest", "message_uuids", "context_text")


def session_queryset(*, project: Project) -> QuerySet[Session]:
    return Session.objects.filter(project=project).select_related("author", "project").defer(*HEAVY_COLUMNS)


def server_redaction_totals(*, project: Project) -> tuple[int, int]:
    """(sessions, secrets) the server's second wall caught that the uploading client had missed.

    Reads what the worker recorded (``Session.server_redaction``); only sessions with a catch are
    read, and only that column."""
    caught = Session.objects.filter(project=project).exclude(server_redaction={}).exclude(server_redaction=None)
    counts = list(caught.values_list("server_redaction", flat=True))
    return len(counts), sum(int(n) for found in counts for n in found.values())


def session_list_queryset(*, project: Project) -> QuerySet[Session]:
    """Sessions for a list page: without the columns only one session's page shows (up to 10,000
    paths and a 4,000-character summary each; a page of 200 sessions once weighed 96 MB)."""
    return session_queryset(project=project).defer("files_touched", "summary")


def commit_prefix(value: str) -> str:
    if not COMMIT_PREFIX.match(value or ""):
        raise DomainError("invalid", "A commit is 7 to 40 hexadecimal characters.", field="commit")
    return value.lower()


def indexed(condition: Q) -> Q:
    """``condition`` on a GIN-indexed column (``search_vector``, ``files_touched``, ``message_uuids``), with
    ``id IN (the scoped project's sessions that meet it)`` read from the owner's view ``TenantSession``: there
    it is an index condition, where under the policy ``@@``, ``?|`` and ``@>`` (not leakproof) would be checked
    row by row through the whole project. The outer query keeps row-level security, and keeps ``condition``
    too: a frequent word is found by walking the project newest-first and checking each row, and the view is
    then probed only for the rows that match (docs/scaling.md "Search under row-level security"). Without
    row-level security no scope names a project to the view, and the condition applies as it is."""
    if not settings.SESSIONLEDGER_RLS:
        return condition
    return condition & Q(pk__in=TenantSession.objects.filter(condition).values("pk"))


def session_search(queryset: QuerySet[Session], text: str) -> QuerySet[Session]:
    query = SearchQuery(search_text(text), search_type="websearch", config="english")
    return queryset.filter(indexed(Q(search_vector=query)))


def session_files(queryset: QuerySet[Session], paths: list[str]) -> QuerySet[Session]:
    """Sessions that touched any of ``paths`` (``files_touched ?| paths``: the GIN index ``session_files``)."""
    return queryset.filter(indexed(Q(files_touched__has_any_keys=paths)))


def sessions_for_commit(*, project: Project, sha: str) -> QuerySet[Session]:
    """Sessions of a commit (prefix ≥ 7), including those of commits re-linked to it after a rebase."""
    prefix = commit_prefix(sha)
    relinked = CommitLink.objects.filter(project=project, new_hash__hexprefix=prefix).values("old_hash")
    # ``= ANY(ARRAY(subquery))``, not ``IN (subquery)``: an array computed once, so both sides of
    # the OR are conditions of the (project, commit_hash) index (a BitmapOr), never a scan.
    old_hashes = ArraySubquery(relinked)
    return session_queryset(project=project).filter(
        Q(commit_hash__hexprefix=prefix) | Q(commit_hash__any_of=old_hashes)
    )


def sessions_for_task(*, project: Project, task_id: str) -> QuerySet[Session]:
    return session_queryset(project=project).filter(task_id=task_id)


def session_get(*, project: Project, session_id: Any) -> Session | None:
    queryset = session_queryset(project=project).select_related("previous")
    return _one(queryset.defer(*(f"previous__{name}" for name in HEAVY_COLUMNS)), session_id)


def session_page_get(*, project: Project, session_id: Any) -> Session | None:
    """One session as its page shows it, in one statement: no previous segment's row (its id is on the
    session), and the next segment's id (``next_segment_id``, or None) from a subquery."""
    following = Session.objects.filter(project=project, previous=OuterRef("pk")).order_by("created_at").values("pk")[:1]
    return _one(session_queryset(project=project).annotate(next_segment_id=Subquery(following)), session_id)


def _one(queryset: QuerySet[Session], session_id: Any) -> Session | None:
    """The session of that id, or None (also for an id that is no UUID). Only a malformed id is
    "no such session": a database that fails the lookup reaches the caller (a 503, not a 404)."""
    try:
        key = Session._meta.get_field("id").to_python(session_id)
    except ValidationError:
        return None
    return queryset.filter(pk=key).first()


def session_document(*, session: Session) -> dict[str, Any] | None:
    """The content document, or None while the session is still being processed."""
    if not session.content_storage_key:
        return None
    return blobs.load_json_gz(session.content_storage_key)


def filter_messages(
    messages: list[dict[str, Any]],
    *,
    roles: list[str] | None = None,
    kinds: list[str] | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    text: str | None = None,
    buckets: list[str] | None = None,
) -> list[dict]:
    """Role/kind/time/text filtering of normalised messages.

    ``roles`` is the message's own role (the API's contract: thinking is role ``assistant``, kind
    ``thinking``). ``buckets`` are the session page's: there ``thinking`` is a bucket of its own,
    so hiding the assistant's replies and showing its thinking (or the reverse) are both possible.
    """
    needle = (text or "").casefold()

    def keep(message: dict[str, Any]) -> bool:
        return (
            (not roles or message["role"] in roles)
            and (not buckets or role_bucket(message) in buckets)
            and (not kinds or message["kind"] in kinds)
            and _within(message_time(message), since, until)
            and (not needle or needle in (message.get("content") or "").casefold())
        )

    return [message for message in messages if keep(message)]


def role_bucket(message: dict[str, Any]) -> str:
    return "thinking" if message["kind"] == "thinking" else message["role"]


def message_time(message: dict[str, Any]) -> datetime | None:
    try:
        stamp = datetime.fromisoformat(message.get("timestamp") or "")
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


def _within(stamp: datetime | None, since: datetime | None, until: datetime | None) -> bool:
    if since is None and until is None:
        return True
    return stamp is not None and (since is None or stamp >= since) and (until is None or stamp <= until)


# --- pages: the browser UI's reads; the API may use them too -----------------------------------

HEADLINE_START, HEADLINE_STOP = "\x02", "\x03"  # never in text; the page escapes, then swaps in <mark>


def session_list_with_snippets(queryset: QuerySet[Session], text: str) -> QuerySet[Session]:
    """Full-text filter plus a ``snippet`` of where it matched (``ts_headline``, per returned row).

    The headline is taken from ``search_text`` — at most 16,000 characters of subject, prompts,
    failed tool outputs, commands and replies, one line each (``sessions_app.processing``) — or,
    for a session processed before that column existed, from title, commit message and summary;
    ``matching_sentence`` then keeps the sentence of the first match. The markers are control
    characters, not HTML, because the snippet is transcript text: the caller escapes it first
    and only then turns the markers into highlighting.
    """
    from django.contrib.postgres.search import SearchHeadline
    from django.db.models import TextField, Value
    from django.db.models.functions import Coalesce, Concat, NullIf

    query = SearchQuery(search_text(text), search_type="websearch", config="english")
    older = Concat("title", Value("\n"), "commit_message", Value("\n"), "summary", output_field=TextField())
    document = Coalesce(NullIf("search_text", Value("")), older, output_field=TextField())
    return queryset.filter(indexed(Q(search_vector=query))).annotate(
        snippet=SearchHeadline(
            document,
            query,
            config="english",
            start_sel=HEADLINE_START,
            stop_sel=HEADLINE_STOP,
            max_words=40,
            min_words=12,
            max_fragments=1,
        )
    )


SENTENCE_ENDS = (". ", "? ", "! ", "\n")
SENTENCE_CAP = 240


def matching_sentence(headline: str) -> str:
    """The sentence (or line) of ``headline``'s first match, at most ``SENTENCE_CAP`` characters
    around it; the headline itself when nothing is marked. Linear: a few ``find`` calls."""
    start = headline.find(HEADLINE_START)
    stop = headline.find(HEADLINE_STOP, start + 1) if start >= 0 else -1
    if start < 0 or stop < 0:
        return headline[:SENTENCE_CAP]
    begin = max(
        (headline.rfind(end, 0, start) + len(end) for end in SENTENCE_ENDS if headline.rfind(end, 0, start) >= 0),
        default=0,
    )
    ends = [found + 1 for end in SENTENCE_ENDS if (found := headline.find(end, stop)) >= 0]
    finish = min(ends, default=len(headline))
    begin = max(begin, start - SENTENCE_CAP // 2)
    finish = min(finish, begin + SENTENCE_CAP)
    return headline[begin:finish].strip()


def session_recent_for_user(*, user: object, limit: int = 20) -> list[Session]:
    """The newest sessions across every project the user is a member of (the dashboard)."""
    from projects.scoping import unscoped

    with unscoped():
        return list(
            Session.objects.filter(project__memberships__user=user)
            .select_related("author", "project")
            .order_by("-captured_at", "-id")[:limit]
        )


def sessions_on_branch(*, project: Project, branch: str) -> QuerySet[Session]:
    """A branch's sessions in the order they happened (the branch timeline)."""
    return session_list_queryset(project=project).filter(feature_branch=branch).order_by("captured_at", "id")


def session_branches(*, project: Project, limit: int = 200, recent: int = 2000) -> list[str]:
    """Branch names of the project's recent sessions, for the list's branch picker.

    Taken from the newest ``recent`` sessions (an index range scan), not a DISTINCT over the
    whole project, so the picker costs the same at a million sessions.
    """
    newest = (
        Session.objects.filter(project=project)
        .order_by("-captured_at", "-id")
        .values_list("feature_branch", flat=True)[:recent]
    )
    names = sorted({name for name in newest if name})
    return names[:limit]


def sessions_for_message(*, project: Project, message_uuid: Any) -> QuerySet[Session]:
    """The sessions that hold message ``message_uuid``, in upload order (a resumed or forked
    conversation repeats earlier lines, so several may). One indexed query (GIN on
    ``message_uuids``).

    Upload order, the server's clock: ``captured_at`` is the client's word, and a teammate who
    re-uploads the message with an earlier date must not come first."""
    holding = indexed(Q(message_uuids__contains=[message_uuid]))
    rows: QuerySet[Session] = Session.objects.filter(Q(project=project), holding)
    return rows.order_by("created_at", "id")

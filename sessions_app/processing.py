"""Turn a stored raw transcript into the content document and the row's derived fields.

Everything here is re-derivable from the raw blob, so ``reprocess`` can apply a better parser
to every stored session. A session's final status is written once (``status=processing`` is
part of the UPDATE's WHERE), so two workers racing on a redelivered task cannot flip it.
"""

from __future__ import annotations

import logging
import operator
import uuid
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from functools import reduce
from typing import Any

from django.conf import settings
from django.contrib.postgres.search import SearchVector
from django.db import InterfaceError, OperationalError, transaction
from django.db.models import Value
from django.utils import timezone

from sessionledger.core import repopaths
from sessionledger.core.formats import parse_transcript
from sessionledger.core.formats.facts import effort
from sessions_app import blobs, parts
from sessions_app.budget import BudgetExceeded, cpu_budget
from sessions_app.context import context_texts
from sessions_app.models import Session, Status
from sessions_app.pgtext import pg_safe
from sessions_app.redaction import second_wall
from sessions_app.signals import session_processed

logger = logging.getLogger(__name__)

SEARCH_TEXT_CAP = 300_000  # characters per weight; keeps the tsvector well under Postgres's 1 MB
# Tool commands and outputs (weight D, below prompts and replies): each output's first and last
# characters (a test run's error is at its end), errors first, within a total cap.
COMMAND_CAP, OUTPUT_HEAD, OUTPUT_TAIL, TOOL_TEXT_CAP = 1_000, 3_000, 3_000, 200_000
# What a list's snippet is picked from (``search_text``): short, so ts_headline over a page is cheap.
SNIPPET_TEXT_CAP, SNIPPET_LINE_CAP = 16_000, 400
PROMPT_CAP, PROMPTS_KEPT, LAST_TEXT_CAP, SUMMARY_CAP = 600, 30, 2_000, 4_000
# A transcript names its own tools and files: bounded before they reach the row (and insights).
FILES_KEPT, PATH_CAP, TOOLS_KEPT, TOOL_NAME_CAP = 10_000, 1024, 50, 64
MESSAGE_UUIDS_KEPT = 20_000
LAST_ACTION_CAP = 300  # the last tool call, a digest entry's summary when the assistant said nothing
OUTAGES = (blobs.StorageUnavailable, OperationalError, InterfaceError)
SEARCH_WEIGHTS = ("A", "B", "C", "D")  # the weights PostgreSQL knows: no other reaches the vector


@dataclass
class Derived:
    fields: dict[str, Any]
    search: dict[str, str]
    document: dict[str, Any]


def session_process(*, session: Session) -> None:
    """The worker's job: derive, then set the final status once. Broken content → ``failed``, kept.

    Whatever goes wrong with this one session — a parser error, a spent CPU budget, a value the
    database refuses at the final write — ends it ``failed`` with the reason, never ``processing``
    (which the sweep would re-queue forever). Only outages (storage, database) propagate, to be
    retried.
    """
    if session.status != Status.PROCESSING:
        return
    with _transaction():
        if session_lock(session=session, status=Status.PROCESSING):
            _process(session)


def _process(session: Session) -> None:
    try:
        with cpu_budget(settings.SESSIONLEDGER_PROCESS_CPU_SECONDS):
            derived = derive(session)
    except blobs.StorageUnavailable:
        raise
    except BudgetExceeded as exc:
        logger.warning("processing session %s stopped: %s", session.pk, exc)
        session_fail(session=session, reason=str(exc))
        return
    except Exception as exc:
        logger.exception("processing session %s failed", session.pk)
        session_fail(session=session, reason=f"{type(exc).__name__}: {exc}")
        return
    try:
        if _finish(session, derived.fields, session.requested_status, derived.search):
            _announce(session, derived)
    except OUTAGES:
        raise
    except Exception as exc:
        logger.exception("storing the result of session %s failed", session.pk)
        session_fail(session=session, reason=f"the result could not be stored: {type(exc).__name__}: {exc}")


def session_fail(*, session: Session, reason: str) -> None:
    """End a session still ``processing`` as ``failed``, keeping its raw blob and saying why."""
    _finish(session, {"error": reason[:2000]}, Status.FAILED)


def sessions_give_up(*, session_ids: list[object], attempts: int) -> int:
    """Fail sessions whose processing was started ``attempts`` times without ever ending: each
    start is counted before the work, so these are the ones that kill or hang their worker."""
    reason = (
        f"gave up after {attempts} processing attempt(s) that never finished (the worker was killed or "
        "timed out each time); this session is not retried"
    )
    return Session.objects.filter(pk__in=session_ids, status=Status.PROCESSING).update(
        status=Status.FAILED, processed_at=timezone.now(), error=reason
    )


def _transaction() -> AbstractContextManager[object]:
    """The task's transaction (``project_task``), or one of our own without row-level security (the lock
    lives until a transaction ends)."""
    return nullcontext() if transaction.get_connection().in_atomic_block else transaction.atomic()


def session_lock(*, session: Session, **condition: object) -> bool:
    """Hold the session's row until this transaction ends; whether it (still matching ``condition``) exists.

    Every blob the worker writes (the second wall's redacted parts, the content document) is written
    under this lock, and every deletion deletes the row, which waits for it. So either the worker
    commits first and the deletion, which queues every key a session can have
    (``services.session_keys``), deletes what it wrote once the deletion commits; or the deletion
    commits first and the worker finds no row here and writes nothing (docs/security.md "Erasure").
    ``no_key``: a share link or attribution inserted meanwhile, which only needs the row to stay, is
    not held up.
    """
    found: bool = Session.objects.select_for_update(no_key=True).filter(pk=session.pk, **condition).exists()
    return found


def session_reprocess(*, session: Session) -> None:
    """Re-derive content for a stored session (parser upgrade); a final status stays as it was."""
    with _transaction():
        if session_lock(session=session):
            _reprocess(session)


def _reprocess(session: Session) -> None:
    derived = derive(session)
    session.processed_at = timezone.now()  # anew: cached pages of the old content expire
    search_vector = _search_vector(pg_safe(derived.search))
    Session.objects.filter(pk=session.pk).update(
        **pg_safe(derived.fields), search_vector=search_vector, processed_at=session.processed_at
    )
    if session.status in (Status.PROCESSING, Status.FAILED):
        Session.objects.filter(pk=session.pk).update(status=session.requested_status, error="")
    _announce(session, derived)


def _finish(session: Session, fields: dict[str, Any], status: str, search: dict[str, str] | None = None) -> bool:
    """The one write of a final status, whether this call wrote it.

    Inside the task's transaction it follows a savepoint of its own: a refused write is rolled back to
    it and leaves the transaction usable for ``session_fail``. A write that succeeds leaves the savepoint
    to the transaction's COMMIT, which releases it: ``atomic()`` would spend a round trip releasing it
    first, a noticeable share of a small session's task.
    """
    session.processed_at = timezone.now()
    values = {"status": status, "processed_at": session.processed_at, **pg_safe(fields)}
    if search:
        values["search_vector"] = _search_vector(pg_safe(search))
    write = Session.objects.filter(pk=session.pk, status=Status.PROCESSING)
    if not transaction.get_connection().in_atomic_block:
        rows: int = write.update(**values)  # its own transaction
        return rows > 0
    savepoint = transaction.savepoint()
    try:
        rows = write.update(**values)
        return rows > 0
    except Exception:
        transaction.set_rollback(False)  # as atomic() does on leaving a savepoint's block with an error
        transaction.savepoint_rollback(savepoint)
        raise


def _announce(session: Session, derived: Derived) -> None:
    """``session_processed``, once the write is committed (the session page warms its cache with it)."""
    session.content_storage_key = derived.fields["content_storage_key"]
    document = derived.document
    transaction.on_commit(
        lambda: session_processed.send_robust(sender=Session, session=session, document=document), robust=True
    )


def derive(session: Session) -> Derived:
    raw = blobs.gunzip(blobs.get(session.raw_storage_key))
    raw, inputs = second_wall(session=session, raw=raw, inputs=parts.parser_inputs(session))
    parsed = parse_transcript(raw, agent=session.agent, **inputs)
    document = parsed.to_document(**_header(session, parsed))
    key = blobs.content_key(session.project_id, session.pk)
    blobs.put(key, blobs.gzip_json(document))
    search = _search_text(session, parsed)
    fields = {**_fields(session, parsed, key), "search_text": _snippet_text(session, parsed)}
    return Derived(fields=fields, search=search, document=document)


def _header(session: Session, parsed: Any) -> dict[str, Any]:
    return {
        "session_id": str(session.pk),
        "project": session.project.slug,
        "feature_branch": session.feature_branch,
        "commit_hash": session.commit_hash,
        "task_id": session.task_id,
        "author": session.author.email if session.author else None,
        "captured_at": session.captured_at.isoformat() if session.captured_at else None,
        "agent": {
            "name": session.agent,
            "version": session.agent_version or parsed.agent_version,
            "session_id": session.agent_session_id or parsed.agent_session_id,
        },
    }


def _fields(session: Session, parsed: Any, key: str) -> dict[str, Any]:
    # Relative to the repository root, never absolute: a tool call's absolute path (an older
    # client's, or the transcript's own) is dropped when the file is listed, else `<outside>/<name>`.
    files = repopaths.normalise([str(path) for path in [*session.files_touched, *parsed.files_touched]])
    files = list(dict.fromkeys(path[:PATH_CAP] for path in files))
    files = pg_safe(files[:FILES_KEPT])
    title = pg_safe((parsed.title or session.commit_message.split("\n", 1)[0] or session.task_id or "")[:200])
    digest = pg_safe(_digest(parsed))
    return {
        "content_storage_key": key,
        "message_count": parsed.message_count,
        "turn_count": parsed.turn_count,
        "title": title,
        "summary": _summary(session, parsed, files),
        "files_touched": files,
        "message_uuids": message_uuids(parsed.messages),
        "digest": digest,
        # From the values as stored (pg_safe), so the text equals what a digest would render from the row.
        "context_text": context_texts(
            title=title, commit_message=pg_safe(session.commit_message), files_touched=files, digest=digest
        ),
        "agent_version": (session.agent_version or parsed.agent_version or "")[:32],  # the columns' lengths
        "agent_session_id": (session.agent_session_id or parsed.agent_session_id or "")[:100],
        "error": "",
    }


def message_uuids(messages: list[dict[str, Any]]) -> list[uuid.UUID]:
    """The distinct message uuids (main and sub-agents) that parse as UUIDs, capped: the index of
    the short message permalink. A hostile or odd uuid is left out (its message keeps its page link)."""
    found: dict[uuid.UUID, None] = {}
    for message in messages:
        value = message.get("uuid")
        if isinstance(value, str) and len(value) == 36:
            try:
                found[uuid.UUID(value)] = None
            except ValueError:
                continue
            if len(found) >= MESSAGE_UUIDS_KEPT:
                break
    return list(found)


def _trim(text: str, cap: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= cap else text[: cap - 1] + "…"


def _digest(parsed: Any) -> dict[str, Any]:
    """Facts precomputed for the AI context digest and insights, so neither reads blobs."""
    return {
        "prompts": [_trim(p, PROMPT_CAP) for p in parsed.prompts[:PROMPTS_KEPT]],
        "last_assistant_text": _trim(parsed.last_assistant_text or "", LAST_TEXT_CAP),
        "last_action": _last_action(parsed.messages),
        "tool_counts": _top_tools(parsed.tool_counts),
        "first_timestamp": parsed.first_timestamp,
        "last_timestamp": parsed.last_timestamp,
        "skipped_lines": parsed.stats.get("skipped_lines", 0),
        "effort": _effort(parsed),
    }


def _last_action(messages: list[dict[str, Any]]) -> str:
    """The segment's last tool call of the main conversation, `Bash: bd close SL-10`: what a
    digest entry says was done when the assistant said nothing at the end (an epic closed by a
    command alone)."""
    for message in reversed(messages):
        if message.get("kind") == "tool_use" and not message.get("sidechain"):
            tool = message.get("tool") if isinstance(message.get("tool"), dict) else {}
            name = str(tool.get("name") or "tool")[:TOOL_NAME_CAP]
            return _trim(f"{name}: {message.get('content') or ''}", LAST_ACTION_CAP)
    return ""


def _effort(parsed: Any) -> dict[str, Any]:
    """Tokens per model, active and tool time, steps (``formats.facts.effort``), for insights' cost
    and time per author, branch and week. A parser without per-message usage (Codex) gives its
    session totals under an unknown model."""
    facts = effort(parsed.messages)
    if not facts["tokens"] and any(parsed.token_usage.values()):
        usage = parsed.token_usage
        keys = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        facts["tokens"] = {"": [int(usage.get(key) or 0) for key in keys]}
    return facts


def _top_tools(counts: dict[str, Any]) -> dict[str, Any]:
    """The most used tools, names shortened: one row per tool per day goes into insights."""
    ranked = sorted(counts.items(), key=lambda item: -_calls(item[1]))[:TOOLS_KEPT]
    return {name[:TOOL_NAME_CAP]: value for name, value in ranked}


def _calls(value: Any) -> int:
    return value.get("calls", 0) if isinstance(value, dict) else 0


def _summary(session: Session, parsed: Any, files: list[str]) -> str:
    """An extractive digest: the user's words, what changed, and where the assistant ended up."""
    parts = [f"- {_trim(p, 300)}" for p in parsed.prompts[:10]]
    if session.commit_message:
        parts.append(f"Commit: {_trim(session.commit_message.splitlines()[0], 200)}")
    if files:
        parts.append("Files: " + ", ".join(files[:20]) + (" …" if len(files) > 20 else ""))
    if parsed.last_assistant_text:
        parts.append(f"Outcome: {_trim(parsed.last_assistant_text, 600)}")
    return "\n".join(parts)[:SUMMARY_CAP]


def _search_text(session: Session, parsed: Any) -> dict[str, str]:
    assistant = "\n".join(
        m["content"]
        for m in parsed.messages
        if m["role"] == "assistant" and m["kind"] == "text" and not m.get("sidechain")
    )
    return {
        "A": f"{parsed.title}\n{session.commit_message}\n{session.task_id or ''}"[:SEARCH_TEXT_CAP],
        "B": "\n".join(parsed.prompts)[:SEARCH_TEXT_CAP],
        "C": assistant[:SEARCH_TEXT_CAP],
        "D": "\n".join(_tool_texts(parsed.messages))[:TOOL_TEXT_CAP],
    }


def _tool_texts(messages: list[dict[str, Any]]) -> list[str]:
    """Tool commands, then outputs (failed ones first), each bounded: what people paste into search
    is an error message, a test name, a command."""
    commands = [m["content"][:COMMAND_CAP] for m in messages if m["kind"] == "tool_use" and m.get("content")]
    outputs = [m for m in messages if m["kind"] == "tool_result" and m.get("content")]
    outputs.sort(key=lambda m: not (m.get("tool") or {}).get("is_error"))  # stable: errors first
    return commands + [_ends(m["content"]) for m in outputs]


def _ends(text: str) -> str:
    if len(text) <= OUTPUT_HEAD + OUTPUT_TAIL:
        return text
    return f"{text[:OUTPUT_HEAD]}\n…\n{text[-OUTPUT_TAIL:]}"


def _snippet_text(session: Session, parsed: Any) -> str:
    """Lines a search hit can be shown from, most telling first: subject, prompts, failed outputs'
    last lines, commands, replies — one line per sentence-ish piece, bounded."""
    errors = [
        m["content"][-OUTPUT_TAIL:]
        for m in parsed.messages
        if m["kind"] == "tool_result" and (m.get("tool") or {}).get("is_error") and m.get("content")
    ]
    commands = [m["content"] for m in parsed.messages if m["kind"] == "tool_use" and m.get("content")]
    replies = [m["content"] for m in parsed.messages if m["role"] == "assistant" and m["kind"] == "text"]
    pieces = [parsed.title, session.commit_message, *parsed.prompts, *errors, *commands, *replies]
    lines: list[str] = []
    used = 0
    for piece in pieces:
        for line in (piece or "").splitlines():
            line = " ".join(line.split())[:SNIPPET_LINE_CAP]
            if not line:
                continue
            if used + len(line) + 1 > SNIPPET_TEXT_CAP:
                return "\n".join(lines)
            lines.append(line)
            used += len(line) + 1
    return "\n".join(lines)


def _search_vector(parts: dict[str, str]) -> Any:
    """The weighted vector of the parts (weight → text), as one expression of the row's UPDATE."""
    vectors = [
        SearchVector(Value(text), weight=weight, config="english")
        for weight, text in parts.items()
        if weight in SEARCH_WEIGHTS
    ]
    return reduce(operator.add, vectors)

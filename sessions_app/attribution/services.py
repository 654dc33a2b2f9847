"""Writes of attribution records: from an ingest's `attribution` part, or its own endpoint.

The choice (docs/attribution.md): inside an ingest, a bad record never costs the session — the
session is accepted, the record dropped, and the refusal (code, message, field) kept on the
session and returned in the 202 body under ``attribution``. ``POST …/sessions/{id}/attribution``
answers the same refusal as a 400 naming the field, and stores nothing.

Only the session's author or a project admin writes a session's record, by either way: an upload
that repeats a colleague's session leaves the colleague's record alone (docs/security.md "Records
and links a teammate cannot forge").
"""

from __future__ import annotations

import logging
from typing import Any

from projects.errors import DomainError
from projects.models import Role
from sessionledger.core import attribution_record
from sessions_app.attribution import validation
from sessions_app.models import Attribution, Session

logger = logging.getLogger(__name__)


def check_author(*, session: Session, user_id: int, role: str) -> None:
    """Refuse (403) anyone but the session's author or a project admin."""
    if session.author_id != user_id and role != Role.ADMIN:
        raise DomainError(
            "forbidden",
            "Attribution refused: only the session's author or a project admin may write its record.",
            field="attribution",
            status_code=403,
        )


def attribution_store(*, session: Session, data: bytes) -> Attribution:
    """Validate and store (or replace) the session's record; raises DomainError naming the field."""
    record = validation.parse(data)
    validation.validate(record, session)
    # Each step's URL is this server's permalink of its message, whatever address the client used,
    # stored as a path: answers make it absolute with today's SITE_URL (selectors.with_session).
    record = attribution_record.with_urls(record, "", session.project.slug)
    record = validation.only_permalinks(record, session.project)  # no other site, no javascript:
    added, ai = validation.line_totals(record)
    found, _ = Attribution.objects.update_or_create(
        session=session,
        defaults={
            "project_id": session.project_id,
            "record": record,
            "error": {},
            "added_lines": added,
            "ai_lines": ai,
        },
    )
    return found


def attribution_from_ingest(*, session: Session, data: bytes, user_id: int, role: str) -> dict[str, Any]:
    """Store the record an upload carried; a refusal flags the session instead of failing it.
    An upload repeating another author's session changes nothing of it."""
    try:
        check_author(session=session, user_id=user_id, role=role)
    except DomainError as exc:
        return {"status": "refused", "error": _error(exc)}
    try:
        attribution_store(session=session, data=data)
    except DomainError as exc:
        error = _error(exc)
        Attribution.objects.update_or_create(
            session=session, defaults={"project_id": session.project_id, "record": None, "error": error}
        )
        logger.info("attribution of session %s refused: %s (%s)", session.pk, exc.message, exc.field)
        return {"status": "refused", "error": error}
    return {"status": "stored"}


def _error(exc: DomainError) -> dict[str, Any]:
    return {"code": exc.code, "message": exc.message, "field": exc.field}

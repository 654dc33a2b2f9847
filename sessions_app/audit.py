"""Who read what: reads of session content (the access log) and deletions (by an admin or by
retention). Administrative events are ``projects.audit_trail.record``'s; reading and exporting them
is ``governance.audit``'s."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from django.db import connection
from django.http import HttpRequest
from django.utils import timezone

from sessions_app.models import Session

logger = logging.getLogger("sessionledger.audit")


UPSERT_HEAD = """
INSERT INTO sessions_app_accesslog (project_id, session_id, user_id, via, hour, at, count, ip, user_agent)
VALUES """
UPSERT_ROW = "(%s, %s, %s, %s, %s, %s, 1, %s, %s)"
UPSERT_TAIL = """
ON CONFLICT ON CONSTRAINT accesslog_one_row_per_hour DO UPDATE
SET count = sessions_app_accesslog.count + 1, at = EXCLUDED.at, ip = EXCLUDED.ip, user_agent = EXCLUDED.user_agent
"""


def access_record(*, session: Session, request: HttpRequest, via: str) -> None:
    """Count a read: one row per reader, session, way of reading and hour (one upsert statement).

    Changing a filter or loading the next lazy page is another read of the same session, so it
    adds to the hour's row instead of writing a new one; the row keeps the latest time, address
    and browser.
    """
    access_records(sessions=[session], request=request, via=via)


def access_records(*, sessions: Sequence[Session], request: HttpRequest, via: str) -> None:
    """Count a read of each of ``sessions`` (a page showing several: the segments of a whole
    conversation) as ``access_record`` does, in one statement: a round trip per page, not per session."""
    unique = list({session.pk: session for session in sessions}.values())  # one row may change once per statement
    if not unique:
        return
    user = request.user if request.user.is_authenticated else None
    now = timezone.now()
    hour = now.replace(minute=0, second=0, microsecond=0)
    ip = request.META.get("REMOTE_ADDR") or None
    agent = request.META.get("HTTP_USER_AGENT", "")[:300]
    values: list[Any] = []
    for session in unique:
        values += [session.project_id, session.pk, user.pk if user else None, via, hour, now, ip, agent]
    with connection.cursor() as cursor:
        cursor.execute(UPSERT_HEAD + ", ".join([UPSERT_ROW] * len(unique)) + UPSERT_TAIL, values)


def deletion_logged(session: Session, *, by: str) -> None:
    logger.info(
        "deleted session %s (project %s, %s %s, %d bytes) by %s",
        session.pk,
        session.project_id,
        session.kind,
        session.commit_hash or session.task_id,
        session.size_bytes,
        by,
    )

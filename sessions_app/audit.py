"""The audit trail: reads of session content, deletions (by an admin or by retention), and the
filters and exports of administrative events (``projects.AuditEvent``, written by
``projects.audit_trail.record``)."""

from __future__ import annotations

import csv
import io
import json
import logging
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import QuerySet
from django.http import HttpRequest, StreamingHttpResponse
from django.utils import timezone

from projects.models import AuditEvent
from sessions_app.csv_export import spreadsheet_cell
from sessions_app.models import Session

EXPORT_CHUNK = 2000

logger = logging.getLogger("sessionledger.audit")


UPSERT = """
INSERT INTO sessions_app_accesslog (project_id, session_id, user_id, via, hour, at, count, ip, user_agent)
VALUES (%s, %s, %s, %s, %s, %s, 1, %s, %s)
ON CONFLICT ON CONSTRAINT accesslog_one_row_per_hour DO UPDATE
SET count = sessions_app_accesslog.count + 1, at = EXCLUDED.at, ip = EXCLUDED.ip, user_agent = EXCLUDED.user_agent
"""


def access_record(*, session: Session, request: HttpRequest, via: str) -> None:
    """Count a read: one row per reader, session, way of reading and hour (one upsert statement).

    Changing a filter or loading the next lazy page is another read of the same session, so it
    adds to the hour's row instead of writing a new one; the row keeps the latest time, address
    and browser.
    """
    user = request.user if request.user.is_authenticated else None
    now = timezone.now()
    hour = now.replace(minute=0, second=0, microsecond=0)
    ip = request.META.get("REMOTE_ADDR") or None
    agent = request.META.get("HTTP_USER_AGENT", "")[:300]
    with connection.cursor() as cursor:
        cursor.execute(UPSERT, [session.project_id, session.pk, user.pk if user else None, via, hour, now, ip, agent])


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


EXPORT_FIELDS = ("at", "project_slug", "actor_email", "kind", "target", "detail", "via", "ip", "user_agent")


def events_filtered(
    events: QuerySet[AuditEvent],
    *,
    actor: str = "",
    kind: str = "",
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet[AuditEvent]:
    """The filters of the audit page and API: who (e-mail), what (kind), when (from, until)."""
    if actor:
        events = events.filter(actor_email__iexact=actor)
    if kind:
        events = events.filter(kind=kind)
    if since:
        events = events.filter(at__gte=since)
    if until:
        events = events.filter(at__lte=until)
    return events


def event_row(event: AuditEvent) -> dict[str, Any]:
    return {
        "at": event.at.isoformat(),
        "project_slug": event.project_slug,
        "actor_email": event.actor_email,
        "kind": event.kind,
        "target": event.target,
        "detail": event.detail,
        "via": event.via,
        "ip": event.ip,
        "user_agent": event.user_agent,
    }


def jsonl_lines(events: QuerySet[AuditEvent]) -> Iterator[str]:
    for event in events.iterator(chunk_size=EXPORT_CHUNK):
        yield json.dumps(event_row(event), ensure_ascii=False) + "\n"


def csv_lines(events: QuerySet[AuditEvent]) -> Iterator[str]:
    """CSV with formula-triggering cells defused (docs/security.md "Exports"), a line at a time."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(EXPORT_FIELDS)
    for event in events.iterator(chunk_size=EXPORT_CHUNK):
        row = event_row(event)
        row["detail"] = json.dumps(row["detail"], ensure_ascii=False)
        writer.writerow([spreadsheet_cell(row[name]) for name in EXPORT_FIELDS])
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    yield buffer.getvalue()


def export_response(events: QuerySet[AuditEvent], fmt: str, filename: str) -> StreamingHttpResponse:
    lines, content_type = (
        (csv_lines(events), "text/csv; charset=utf-8")
        if fmt == "csv"
        else (jsonl_lines(events), "application/jsonl; charset=utf-8")
    )
    response = StreamingHttpResponse(lines, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}.{fmt}"'
    return response

"""Reading the audit trail (docs/security.md "Audit trail"): the filters of its page and API, and its
export as CSV (formula cells defused) or JSON lines, streamed a chunk of rows at a time. The events
are written by ``projects.audit_trail.record`` wherever they happen; reading them is one too
(``trail_read_record``)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from django.db.models import QuerySet
from django.http import StreamingHttpResponse

from projects.audit_trail import record
from projects.models import AuditEvent, Project
from sessions_app.csv_export import spreadsheet_cell
from sessions_app.export import AUDIT_FIELDS

EXPORT_CHUNK = 2000

EXPORT_FIELDS = AUDIT_FIELDS  # the same columns as a project's archive (docs/export-format.md)


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


def trail_read_record(request: Any, *, project: Project | None, filters: dict[str, Any], fmt: str = "") -> None:
    """One ``audit.read`` per page or API page served, one ``audit.exported`` per download (however many
    rows it streams), naming the filters: who looked at the trail, and at what."""
    shown = {name: str(value) for name, value in filters.items() if value}
    kind, detail = ("audit.exported", {"format": fmt, "filters": shown}) if fmt else ("audit.read", {"filters": shown})
    record(request, kind=kind, project=project, target=project.slug if project else "", detail=detail)


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

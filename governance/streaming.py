"""Audit events delivered off the box as they happen (docs/security.md "Audit trail").

The audit table is its own outbox: a row is written in the transaction of the change it records and
never changes afterwards, and within a chain (a project, or deployment-wide events) ids follow commit
order (migration ``governance/0001``). So an ``AuditDelivery`` cursor per chain is all delivery keeps:
every event above it is pending, sent in id order, and the cursor moves only after the sink took it.
A sink that is down keeps its events pending — retried with exponential backoff, each attempt starting
at the first undelivered one — so each arrives at least once and in order; receivers de-duplicate on
``event_id`` (the row's chain hash, the same on every redelivery).

Sinks, from ``SESSIONLEDGER_AUDIT_SINK``: ``https://…`` (a POST per event, HMAC-SHA256 signed with
``SESSIONLEDGER_AUDIT_SINK_SECRET``), ``syslog+tcp://host:port`` / ``syslog+tls://host:port`` (RFC 5424
messages, octet-counted framing of RFC 6587/5425), ``bucket:PREFIX`` (one object of newline-delimited
JSON per batch, in the blob storage).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import logging
import socket
import ssl
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypedDict
from urllib.parse import urlsplit

from celery import shared_task
from django.conf import settings
from django.db import connection, transaction
from django.db.models.signals import post_save
from django.utils import timezone
from prometheus_client import Counter
from prometheus_client.core import GaugeMetricFamily

from config import metrics
from governance.dbroles import AUDIT_TABLE
from governance.models import AuditDelivery
from projects.models import AuditEvent
from projects.scoping import unscoped

logger = logging.getLogger(__name__)

BATCH = 200
BACKOFF_MAX_SECONDS = 600
TIMEOUT_SECONDS = 10
DELIVERED = Counter("sessionledger_audit_stream_delivered", "Audit events the sink accepted")
FAILURES = Counter("sessionledger_audit_stream_failures", "Failed attempts to deliver audit events")


class StreamedEvent(TypedDict):
    event_id: str  # the row's chain hash: the same on every redelivery
    id: int
    at: str
    project_id: str | None
    project_slug: str
    actor_email: str
    kind: str
    target: str
    detail: dict[str, Any]
    via: str
    ip: str | None
    user_agent: str
    prev_hash: str


class SinkError(Exception):
    """The sink did not take the events; they stay pending."""


_PENDING = f"""
SELECT id, at, project_id, project_slug, actor_email, kind, target, detail, via, host(ip), user_agent,
       prev_hash, hash
FROM {AUDIT_TABLE} WHERE coalesce(project_id::text, '') = %s AND id > %s ORDER BY id LIMIT %s"""


def _pending(chain: str, after: int, limit: int = BATCH) -> list[StreamedEvent]:
    with connection.cursor() as cursor:
        cursor.execute(_PENDING, [chain, after, limit])
        rows = cursor.fetchall()
    return [
        StreamedEvent(
            event_id=hash_,
            id=event_id,
            at=at.isoformat(),
            project_id=str(project_id) if project_id else None,
            project_slug=slug,
            actor_email=actor,
            kind=kind,
            target=target,
            detail=detail if isinstance(detail, dict) else json.loads(detail),
            via=via,
            ip=ip,
            user_agent=agent,
            prev_hash=prev_hash or "",
        )
        for event_id, at, project_id, slug, actor, kind, target, detail, via, ip, agent, prev_hash, hash_ in rows
    ]


def _chains_with_pending() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT e.chain FROM (SELECT coalesce(project_id::text, '') AS chain, max(id) AS last"
            f" FROM {AUDIT_TABLE} GROUP BY 1) AS e"
            " LEFT JOIN governance_auditdelivery AS d ON d.chain = e.chain"
            " WHERE e.last > coalesce(d.delivered_id, 0) ORDER BY e.chain"
        )
        return [chain for (chain,) in cursor.fetchall()]


def deliver(*, ignore_backoff: bool = False) -> int:
    """Send every pending event of every chain whose backoff is over; the number the sink took."""
    sink = sink_for(settings.SESSIONLEDGER_AUDIT_SINK)
    if sink is None:
        return 0
    sent = 0
    with unscoped():
        for chain in _chains_with_pending():
            sent += _deliver_chain(chain, sink, ignore_backoff=ignore_backoff)
    return sent


def _deliver_chain(chain: str, sink: Callable[[list[StreamedEvent]], None], *, ignore_backoff: bool) -> int:
    AuditDelivery.objects.get_or_create(chain=chain)
    with transaction.atomic():
        # One deliverer per chain at a time: another worker skips it rather than sending out of order.
        cursor = AuditDelivery.objects.select_for_update(skip_locked=True).filter(chain=chain).first()
        now = timezone.now()
        if cursor is None or (not ignore_backoff and cursor.next_attempt_at and cursor.next_attempt_at > now):
            return 0
        sent = 0
        while events := _pending(chain, cursor.delivered_id):
            try:
                sink(events)
            except SinkError as exc:
                FAILURES.inc()
                cursor.attempts += 1
                cursor.last_error = str(exc)[:500]
                cursor.last_error_at = now
                cursor.next_attempt_at = now + dt.timedelta(seconds=min(2**cursor.attempts, BACKOFF_MAX_SECONDS))
                logger.warning("audit stream: %s pending for chain %r: %s", len(events), chain, exc)
                break
            sent += len(events)
            DELIVERED.inc(len(events))
            cursor.delivered_id, cursor.delivered_at = events[-1]["id"], timezone.now()
            cursor.attempts, cursor.next_attempt_at = 0, None
        cursor.save()
    return sent


# --- sinks ---------------------------------------------------------------------------------------------


def sink_for(url: str) -> Callable[[list[StreamedEvent]], None] | None:
    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme in ("https", "http"):
        return lambda events: _webhook(url, events)
    if parts.scheme in ("syslog+tcp", "syslog+tls"):
        return lambda events: _syslog(parts.hostname or "", parts.port or 0, parts.scheme == "syslog+tls", events)
    return lambda events: _bucket(parts.path.strip("/") or "audit", events)


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """``Sessionledger-Signature``: HMAC-SHA256 of ``{timestamp}.{body}`` with the shared secret."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


def _webhook(url: str, events: list[StreamedEvent]) -> None:
    for event in events:  # one event a request: the receiver acknowledges each, in order
        body = json.dumps(event, sort_keys=True).encode()
        timestamp = str(int(timezone.now().timestamp()))
        request = urllib.request.Request(url, data=body, method="POST")
        request.add_header("Content-Type", "application/json")
        request.add_header("Sessionledger-Event-Id", event["event_id"])
        request.add_header("Sessionledger-Timestamp", timestamp)
        request.add_header(
            "Sessionledger-Signature", signature(settings.SESSIONLEDGER_AUDIT_SINK_SECRET, timestamp, body)
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
                response.read()
        except (urllib.error.URLError, OSError) as exc:  # HTTPError (non-2xx) is a URLError
            raise SinkError(f"webhook: {exc}") from None


def _sd_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("]", "\\]")


def syslog_message(event: StreamedEvent) -> bytes:
    """One RFC 5424 message: facility log audit (13), severity notice (5); MSGID the kind; the event
    as JSON in MSG, its id and project in structured data."""
    host = (urlsplit(settings.SITE_URL).hostname or "-")[:255]
    data = (
        f'[sessionledger@32473 event_id="{_sd_value(event["event_id"])}" project="{_sd_value(event["project_slug"])}"]'
    )
    header = f"<{13 * 8 + 5}>1 {event['at']} {host} sessionledger - {event['kind'][:32] or '-'} {data} "
    return header.encode() + b"\xef\xbb\xbf" + json.dumps(event, sort_keys=True).encode()


@contextmanager
def _syslog_stream(host: str, port: int, tls: bool) -> Iterator[socket.socket]:
    raw = socket.create_connection((host, port), timeout=TIMEOUT_SECONDS)
    try:
        if tls:
            context = ssl.create_default_context(cafile=settings.SESSIONLEDGER_AUDIT_SINK_CA_FILE or None)
            raw = context.wrap_socket(raw, server_hostname=host)
        yield raw
    finally:
        raw.close()


def _syslog(host: str, port: int, tls: bool, events: list[StreamedEvent]) -> None:
    try:
        with _syslog_stream(host, port, tls) as stream:
            for event in events:
                message = syslog_message(event)
                stream.sendall(str(len(message)).encode() + b" " + message)
            stream.shutdown(socket.SHUT_WR)
            stream.recv(1)  # the server closing its side: it has read everything we sent
    except OSError as exc:
        raise SinkError(f"syslog: {exc}") from None


def _bucket(prefix: str, events: list[StreamedEvent]) -> None:
    from sessions_app.blobs import StorageUnavailable, put

    chain = events[0]["project_id"] or "deployment"
    key = f"{prefix}/{chain}/{events[0]['id']:020d}-{events[-1]['id']:020d}.jsonl"
    try:
        put(key, b"".join(json.dumps(event, sort_keys=True).encode() + b"\n" for event in events))
    except StorageUnavailable as exc:
        raise SinkError(f"bucket: {exc}") from None


# --- when it runs, and what operators see ---------------------------------------------------------------


# Celery's decorator is untyped: only the strict ratchet notices.
@shared_task(name="governance.audit_stream", ignore_result=True)  # type: ignore[untyped-decorator, unused-ignore]
def audit_stream() -> None:
    """After each event's commit, and from beat (retries once a backoff is over)."""
    deliver()


def _on_event(sender: Any, created: bool = False, **kwargs: Any) -> None:
    if created and settings.SESSIONLEDGER_AUDIT_SINK:
        transaction.on_commit(audit_stream.delay)


class DeliveryStatus(TypedDict):
    chain: str
    project_slug: str
    pending: int
    delivered_id: int
    delivered_at: str | None
    attempts: int
    next_attempt_at: str | None
    last_error: str
    last_error_at: str | None


def status() -> list[DeliveryStatus]:
    """Per chain: pending events, the last delivery, the last error (staff API, metrics)."""

    def iso(value: dt.datetime | None) -> str | None:
        return value.isoformat() if value else None

    with unscoped(), connection.cursor() as cursor:
        cursor.execute(
            f"SELECT coalesce(e.project_id::text, ''), max(e.project_slug),"
            " count(*) FILTER (WHERE e.id > coalesce(d.delivered_id, 0))"
            f" FROM {AUDIT_TABLE} AS e"
            " LEFT JOIN governance_auditdelivery AS d ON d.chain = coalesce(e.project_id::text, '') GROUP BY 1"
        )
        pending = {chain: (slug, count) for chain, slug, count in cursor.fetchall()}
        cursors = {c.chain: c for c in AuditDelivery.objects.all()}
    answer = []
    for chain in sorted(set(pending) | set(cursors)):
        c = cursors.get(chain) or AuditDelivery(chain=chain)
        slug, count = pending.get(chain, ("", 0))
        answer.append(
            DeliveryStatus(
                chain=chain,
                project_slug=slug,
                pending=count,
                delivered_id=c.delivered_id,
                delivered_at=iso(c.delivered_at),
                attempts=c.attempts,
                next_attempt_at=iso(c.next_attempt_at),
                last_error=c.last_error,
                last_error_at=iso(c.last_error_at),
            )
        )
    return answer


class StreamStateCollector:
    def collect(self) -> Iterator[GaugeMetricFamily]:
        if not settings.SESSIONLEDGER_AUDIT_SINK:
            return
        chains = status()
        yield GaugeMetricFamily(
            "sessionledger_audit_stream_pending",
            "Audit events not yet delivered to the sink",
            value=sum(c["pending"] for c in chains),
        )
        failing = [c for c in chains if c["attempts"]]
        yield GaugeMetricFamily(
            "sessionledger_audit_stream_failing_chains", "Chains whose last delivery attempt failed", value=len(failing)
        )


def connect() -> None:
    post_save.connect(_on_event, sender=AuditEvent, dispatch_uid="governance.streaming")
    metrics.register_state(StreamStateCollector())

"""Audit events streamed off the box survive a sink that is down: every event arrives at least once and
in order per project, to a real HTTP receiver and a real syslog listener on loopback
(docs/security.md "Audit trail")."""

from __future__ import annotations

import json
import re
import socket
import socketserver
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django_scopes import scopes_disabled

from governance.streaming import deliver, signature
from projects.audit_trail import record
from projects.models import AuditEvent

SECRET = "webhook-shared-secret"


class Receiver:
    def __init__(self) -> None:
        self.up = False
        self.bodies: list[dict] = []
        self.bad_signatures = 0


@pytest.fixture
def webhook() -> Iterator[tuple[str, Receiver]]:
    receiver = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            if not receiver.up:
                self.send_response(503)
            else:
                expected = signature(SECRET, self.headers["Sessionledger-Timestamp"], body)
                receiver.bad_signatures += self.headers["Sessionledger-Signature"] != expected
                receiver.bodies.append(json.loads(body))
                self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/audit-hook", receiver
    server.shutdown()
    server.server_close()


def make_events(world, count: int) -> list[AuditEvent]:
    with scopes_disabled():
        return [
            record(kind="project.settings_changed", project=project, target=f"change {n}")
            for n in range(count)
            for project in (world.project, world.other_project)
        ]


def in_order_per_project(received: list[dict], sent: list[AuditEvent]) -> None:
    firsts: dict[str, list[int]] = {}
    for event in received:
        ids = firsts.setdefault(event["project_slug"], [])
        if event["id"] not in ids:  # at least once: a receiver drops repeats by event id
            ids.append(event["id"])
    for slug in {e.project_slug for e in sent}:
        assert firsts[slug] == [e.pk for e in sent if e.project_slug == slug]


def test_webhook_down_then_up_receives_every_event_in_order_signed(world, webhook, settings, api_as) -> None:
    url, receiver = webhook
    settings.SESSIONLEDGER_AUDIT_SINK, settings.SESSIONLEDGER_AUDIT_SINK_SECRET = url, SECRET
    sent = make_events(world, 3)
    assert deliver(ignore_backoff=True) == 0
    sent += make_events(world, 2)  # more while it is down
    assert deliver() == 0  # in backoff: not even tried

    world.admin.is_staff = True
    world.admin.save()
    staff = api_as(world.admin)
    answer = staff.get("/api/v1/audit/stream").json()
    assert answer["sink"] == url.rsplit("/", 1)[0]
    chains = {c["project_slug"]: c for c in answer["chains"]}
    assert chains["acme-api"]["pending"] == 5 and "503" in chains["acme-api"]["last_error"]
    assert chains["acme-api"]["delivered_at"] is None
    assert api_as(world.member).get("/api/v1/audit/stream").status_code == 404

    receiver.up = True
    with scopes_disabled():
        everything = list(AuditEvent.objects.order_by("id"))  # with the staff token's own event
    assert {e.pk for e in sent} < {e.pk for e in everything}
    assert deliver(ignore_backoff=True) == len(everything)
    in_order_per_project(receiver.bodies, everything)
    assert receiver.bad_signatures == 0
    assert all(re.fullmatch(r"[0-9a-f]{64}", body["event_id"]) for body in receiver.bodies)
    chains = {c["project_slug"]: c for c in staff.get("/api/v1/audit/stream").json()["chains"]}
    assert chains["acme-api"]["pending"] == 0 and chains["acme-api"]["delivered_at"]
    assert deliver(ignore_backoff=True) == 0  # nothing twice once acknowledged


class SyslogListener(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, port: int) -> None:
        self.messages: list[bytes] = []
        super().__init__(("127.0.0.1", port), SyslogFrames)


class SyslogFrames(socketserver.StreamRequestHandler):
    """RFC 6587 octet counting: ``LEN SP MSG``, until the sender closes."""

    def handle(self) -> None:
        server = self.server
        assert isinstance(server, SyslogListener)
        while length := self._length():
            server.messages.append(self.rfile.read(length))

    def _length(self) -> int:
        digits = b""
        while (byte := self.rfile.read(1)) not in (b" ", b""):
            digits += byte
        return int(digits or 0)


def test_syslog_listener_started_late_receives_every_event_in_order(world, settings) -> None:
    with socket.socket() as probe:  # a port nobody listens on yet: the sink is down
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings.SESSIONLEDGER_AUDIT_SINK = f"syslog+tcp://127.0.0.1:{port}"
    sent = make_events(world, 3)
    assert deliver(ignore_backoff=True) == 0

    listener = SyslogListener(port)
    threading.Thread(target=listener.serve_forever, daemon=True).start()
    try:
        assert deliver(ignore_backoff=True) == len(sent)
    finally:
        listener.shutdown()
        listener.server_close()
    data = rb'\[sessionledger@32473 event_id="[0-9a-f]{64}" project="[a-z-]+"\]'
    header = re.compile(rb"<109>1 \S+ \S+ sessionledger - project\.settings_changed " + data + rb" \xef\xbb\xbf")
    assert all(header.match(message) for message in listener.messages)
    received = [json.loads(header.sub(b"", message)) for message in listener.messages]
    in_order_per_project(received, sent)

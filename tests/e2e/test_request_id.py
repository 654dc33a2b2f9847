"""The request id of an upload in the log lines of the real Celery worker that processes it, and the
worker's own metrics endpoint (task counters, processing time, queue lag) under the token rule."""

from __future__ import annotations

import json
import socket
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import wait_for_status
from tests.test_observability import TOKEN, _get_worker_metrics, _sample, _upload

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _json_lines(text: str) -> Iterator[dict[str, Any]]:
    for line in text.splitlines():
        if line.startswith("{"):
            try:
                yield json.loads(line)
            except ValueError:
                continue


def _wait_for_log(capfd, predicate, seconds: float = 30) -> list[dict[str, Any]]:
    """The worker inherits pytest's captured stderr; read it until a line satisfies the predicate."""
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        seen.extend(_json_lines(capfd.readouterr().err))
        if any(predicate(line) for line in seen):
            return seen
        time.sleep(0.2)
    raise AssertionError(f"no such log line in {len(seen)} JSON lines: {seen[-20:]}")


def test_an_uploads_request_id_appears_in_its_celery_tasks_log_lines(world, api_as, start_worker, capfd) -> None:
    port = _free_port()
    start_worker(
        LOG_FORMAT="json",
        LOG_LEVEL="INFO",
        SESSIONLEDGER_METRICS_TOKEN=TOKEN,
        SESSIONLEDGER_WORKER_METRICS_PORT=str(port),
    )
    request_id = f"e2e-{uuid.uuid4().hex[:12]}"
    response = _upload(api_as(world.member), world, "Follow my id", X_REQUEST_ID=request_id)
    assert response.status_code == 202 and response["X-Request-ID"] == request_id
    session_id = response.json()["id"]
    assert wait_for_status(session_id).status == "complete"

    lines = _wait_for_log(capfd, lambda line: line.get("session_id") == session_id and "processed" in line["message"])
    processed = next(line for line in lines if line.get("session_id") == session_id and "processed" in line["message"])
    assert processed["request_id"] == request_id
    assert processed["task_name"] == "sessions.process_session" and processed["task_id"]
    assert processed["level"] == "INFO" and processed["logger"] == "sessions_app.tasks"

    status, text = _get_worker_metrics(port, TOKEN)
    assert status == 200
    labels = {"task": "sessions.process_session"}
    assert _sample(text, "sessionledger_tasks_total", **labels, outcome="started") >= 1
    assert _sample(text, "sessionledger_tasks_total", **labels, outcome="succeeded") >= 1
    assert _sample(text, "sessionledger_task_duration_seconds_count", **labels) >= 1
    assert _sample(text, "sessionledger_task_queue_lag_seconds_count", **labels) >= 1
    assert _get_worker_metrics(port, None)[0] == 404
    assert _get_worker_metrics(port, "wrong")[0] == 404

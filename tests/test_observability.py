"""Operating it: /metrics (counters, access rule), JSON logs, and the request id from API to worker."""

from __future__ import annotations

import json
import logging
import re
import socket
import sys
import time
import urllib.error
import urllib.request
from typing import Any

import pytest
from django.test import Client

from config import health, metrics
from config import logging as request_logging
from sessions_app import blobs
from tests.conftest import conversation
from tests.uploads import commit_hash, metadata_for, upload

TOKEN = "metrics-token-for-tests-0123456789"


def _sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample in Prometheus text format (0 when absent)."""
    wanted = ",".join(f'{key}="{value}"' for key, value in sorted(labels.items()))
    pattern = re.compile(rf"^{re.escape(name)}(?:\{{(.*)\}})? (\S+)$", re.MULTILINE)
    for found_labels, value in pattern.findall(text):
        if ",".join(sorted(found_labels.split(","))) == wanted or (not wanted and not found_labels):
            return float(value)
    return 0.0


def _scrape(**extra: str) -> str:
    response = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}", **extra)
    assert response.status_code == 200
    return response.content.decode()


@pytest.fixture
def metrics_token(settings) -> str:
    settings.SESSIONLEDGER_METRICS_TOKEN = TOKEN
    return TOKEN


def _upload(client, world, prompt: str, **headers: str):
    raw = conversation(prompt)
    return upload(client, world.project.slug, raw, metadata_for(raw, commit_hash=commit_hash(prompt)), **headers)


# --- /metrics: what it counts ------------------------------------------------------------------------


@pytest.mark.django_db
def test_metrics_count_accepted_and_refused_uploads_by_status(world, api_as, metrics_token) -> None:
    before = _scrape()
    assert _upload(api_as(world.member), world, "Count me").status_code == 202
    assert _upload(api_as(world.member), world, "Count me").status_code == 200  # the same upload again
    assert _upload(api_as(None), world, "Anonymous").status_code == 401
    assert _upload(api_as(world.outsider), world, "Outsider").status_code == 404
    after = _scrape()
    for status in ("202", "200", "401", "404"):
        growth = _sample(after, "sessionledger_uploads_total", status=status) - _sample(
            before, "sessionledger_uploads_total", status=status
        )
        assert growth == 1, status
    assert _sample(after, "sessionledger_uploaded_raw_bytes_total") > _sample(
        before, "sessionledger_uploaded_raw_bytes_total"
    )


@pytest.mark.django_db
def test_metrics_report_sessions_waiting_and_stuck_in_processing(world, api_as, metrics_token, settings) -> None:
    settings.SESSIONLEDGER_SWEEP_AFTER_SECONDS = 0  # every processing session counts as stuck
    assert _upload(api_as(world.member), world, "Never processed").status_code == 202
    text = _scrape()
    assert _sample(text, "sessionledger_sessions_processing") == 1
    assert _sample(text, "sessionledger_sessions_stuck") == 1
    assert _sample(text, "sessionledger_processing_oldest_age_seconds") >= 0
    assert "sessionledger_queue_length " in text


@pytest.mark.django_db
def test_metrics_count_storage_errors(world, api_as, metrics_token, monkeypatch) -> None:
    def unavailable(*args: Any, **kwargs: Any) -> None:
        raise blobs.StorageUnavailable("bucket down")

    monkeypatch.setattr(blobs, "put", unavailable)
    before = _sample(_scrape(), "sessionledger_storage_errors_total", operation="ingest")
    assert _upload(api_as(world.member), world, "Storage down").status_code == 503
    text = _scrape()
    assert _sample(text, "sessionledger_storage_errors_total", operation="ingest") == before + 1
    assert _sample(text, "sessionledger_uploads_total", status="503") >= 1


@pytest.mark.django_db
def test_metrics_include_djangos_request_metrics(metrics_token) -> None:
    Client().get("/healthz")
    assert "django_http_requests_total_by_method_total" in _scrape()


# --- /metrics: who may read it -----------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"HTTP_AUTHORIZATION": "Bearer wrong-token"},
        {"HTTP_AUTHORIZATION": f"Token {TOKEN}"},
        {"HTTP_AUTHORIZATION": "Bearer "},
    ],
    ids=["no-token", "wrong-token", "wrong-scheme", "empty-token"],
)
def test_metrics_are_refused_with_404_without_the_token(metrics_token, headers) -> None:
    response = Client().get("/metrics", **headers)
    assert response.status_code == 404
    assert b"sessionledger_" not in response.content


@pytest.mark.django_db
def test_metrics_accept_the_token_as_bearer_header_or_query_parameter(metrics_token) -> None:
    assert Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 200
    assert Client().get(f"/metrics?token={TOKEN}").status_code == 200
    assert Client().get("/metrics?token=nope").status_code == 404


@pytest.mark.django_db
def test_without_a_token_only_direct_loopback_requests_in_development_are_answered(settings) -> None:
    settings.SESSIONLEDGER_METRICS_TOKEN = ""
    settings.PRODUCTION = False
    assert Client().get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 200
    assert Client().get("/metrics", REMOTE_ADDR="::1").status_code == 200
    assert Client().get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 404
    proxied = Client().get("/metrics", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.9")
    assert proxied.status_code == 404, "a proxy on the same host must not open /metrics to the world"
    settings.PRODUCTION = True
    assert Client().get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 404


@pytest.mark.django_db
def test_metrics_refuse_writes(metrics_token) -> None:
    assert Client().post("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 404


# --- logs and the request id -------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_callers_request_id_is_honoured_and_echoed(world, api_as) -> None:
    response = _upload(api_as(world.member), world, "Honour my id", X_REQUEST_ID="ci-build-42.upload-7")
    assert response.status_code == 202
    assert response["X-Request-ID"] == "ci-build-42.upload-7"


@pytest.mark.django_db
@pytest.mark.parametrize("incoming", [None, "", "has spaces", "line\u2028break", "x" * 200, "<script>"])
def test_a_missing_or_unsafe_request_id_is_replaced_by_a_fresh_one(incoming) -> None:
    headers = {} if incoming is None else {"HTTP_X_REQUEST_ID": incoming}
    response = Client().get("/healthz", **headers)
    assert re.fullmatch(r"[0-9a-f]{32}", response["X-Request-ID"])


@pytest.mark.django_db
def test_log_lines_are_json_with_the_request_id(world, api_as, capsys) -> None:
    handler = logging.StreamHandler()
    config = request_logging.logging_config(level="INFO", fmt="json")["formatters"]["json"]
    from pythonjsonlogger.json import JsonFormatter

    handler.setFormatter(JsonFormatter(**{k: v for k, v in config.items() if k != "()"}))
    handler.addFilter(request_logging.ContextFilter())
    target = logging.getLogger("sessions_app.ingest")
    target.addHandler(handler)
    try:
        assert _upload(api_as(world.member), world, "Log me", X_REQUEST_ID="log-me-1").status_code == 202
    finally:
        target.removeHandler(handler)
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
    accepted = [line for line in lines if "accepted" in line["message"]]
    assert accepted and accepted[0]["request_id"] == "log-me-1"
    assert {"time", "level", "logger", "message", "session_id"} <= set(accepted[0])


def test_an_unknown_log_format_stops_start_up() -> None:
    from config.env import ConfigError

    with pytest.raises(ConfigError, match="LOG_FORMAT"):
        request_logging.logging_config(level="INFO", fmt="xml")


def test_a_task_published_inside_a_request_carries_its_id_and_enqueue_time() -> None:
    headers: dict[str, Any] = {}
    request_logging.REQUEST_ID.set("publish-1")
    try:
        request_logging.stamp_task_headers(headers=headers)
    finally:
        request_logging.REQUEST_ID.set("")
    assert headers[request_logging.TASK_HEADER] == "publish-1"
    assert abs(headers[request_logging.ENQUEUED_HEADER] - time.time()) < 5


# --- the worker's own endpoint ----------------------------------------------------------------------


def _get_worker_metrics(port: int, token: str | None) -> tuple[int, str]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, ""


@pytest.mark.django_db
def test_the_worker_endpoint_serves_this_process_metrics_under_the_same_rule(metrics_token) -> None:
    metrics.TASKS.labels("sessions.example", "started").inc()
    server = metrics.serve_worker_metrics(0, host="127.0.0.1")
    try:
        port = server.server_port
        status, text = _get_worker_metrics(port, TOKEN)
        assert status == 200
        assert _sample(text, "sessionledger_tasks_total", task="sessions.example", outcome="started") >= 1
        assert _get_worker_metrics(port, None)[0] == 404
    finally:
        server.shutdown()
        server.server_close()


# --- Sentry (optional) ----------------------------------------------------------------------------------


def test_sentry_without_its_sdk_stops_start_up_naming_the_extra(monkeypatch) -> None:
    from config.env import ConfigError

    monkeypatch.setitem(sys.modules, "sentry_sdk", None)  # as if the `sentry` extra were not installed
    with pytest.raises(ConfigError, match=r"sessionledger-server\[sentry\]"):
        request_logging.sentry_init(dsn="https://key@sentry.example.com/1", environment="test", traces_sample_rate="0")


@pytest.mark.parametrize("rate", ["-0.1", "1.5", "often"])
def test_a_bad_sentry_sample_rate_stops_start_up(rate) -> None:
    from config.env import ConfigError

    with pytest.raises(ConfigError, match="SENTRY_TRACES_SAMPLE_RATE"):
        request_logging.sentry_init(dsn="https://key@sentry.example.com/1", environment="test", traces_sample_rate=rate)


def test_sentry_events_are_tagged_with_the_request_id() -> None:
    request_logging.REQUEST_ID.set("sentry-1")
    try:
        event = request_logging._tag_request_id({"message": "boom"}, {})
    finally:
        request_logging.REQUEST_ID.set("")
    assert event["tags"]["request_id"] == "sentry-1"


# --- /healthz when degraded -------------------------------------------------------------------------


def test_verbose_health_tells_anonymous_callers_only_which_component_is_down(db, settings, caplog) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    settings.REDIS_URL = f"redis://127.0.0.1:{closed_port}/0"
    health.forget()
    with caplog.at_level(logging.WARNING, logger="config.health"):
        response = Client().get("/healthz?verbose")
    health.forget()

    assert response.status_code == 200  # Redis down: this pod still serves
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "redis": "down", "storage": "ok"}}
    assert "Error" not in response.content.decode() and str(closed_port) not in response.content.decode()
    [record] = [r for r in caplog.records if r.name == "config.health"]
    assert record.getMessage() == "health: redis is down"
    assert record.exc_info is not None and str(closed_port) in str(record.exc_info[1])

"""Prometheus metrics: what the service counts, the state it reports at scrape time, and who may read them.

Counters and histograms live in the process that does the work: uploads and storage errors in the
web process, task outcomes, processing time and queue lag in the worker. Each process kind is
scraped on its own (``/metrics`` on the web app, ``SESSIONLEDGER_WORKER_METRICS_PORT`` on a
worker) and Prometheus adds the instances up. Under gunicorn or a prefork worker pool, set
``PROMETHEUS_MULTIPROC_DIR`` so the processes of one instance share their figures (prometheus_client's
multiprocess mode); without it each process reports only its own.

State that apps report (sessions_app: how many sessions are processing, stuck, the age of the
oldest) is read from the database when scraped (``register_state``), so it is right however many
processes there are.

Access (docs/observability.md): with ``SESSIONLEDGER_METRICS_TOKEN`` set, only a request bearing it
(``Authorization: Bearer …`` or ``?token=…``) is answered. Without it, only a direct loopback
request in development is; in production nothing is. Every refusal is a 404: the endpoint does not
announce itself.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponse

logger = logging.getLogger(__name__)


def multiprocess_dir() -> str:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")


if multiprocess_dir():  # prometheus_client writes a file there for the first metric below
    os.makedirs(multiprocess_dir(), exist_ok=True)

UPLOADS = Counter("sessionledger_uploads", "Upload (ingest) requests answered, by HTTP status", ["status"])
UPLOADED_BYTES = Counter("sessionledger_uploaded_raw_bytes", "Uncompressed transcript bytes of accepted uploads")
STORAGE_ERRORS = Counter("sessionledger_storage_errors", "Object storage unavailable, by operation", ["operation"])
TASKS = Counter(
    "sessionledger_tasks", "Celery tasks by outcome (started, succeeded, failed, retried)", ["task", "outcome"]
)
TASK_SECONDS = Histogram(
    "sessionledger_task_duration_seconds",
    "Time a task ran (processing time)",
    ["task"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600),
)
QUEUE_LAG = Histogram(
    "sessionledger_task_queue_lag_seconds",
    "Time from enqueueing a task to a worker starting it",
    ["task"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600),
)
FORWARDING_HEADERS = ("Forwarded", "X-Forwarded-For", "X-Real-IP")


def _process_registry() -> CollectorRegistry:
    """This process's metrics, or every process's of this instance in multiprocess mode."""
    if not multiprocess_dir():
        return REGISTRY
    from prometheus_client import multiprocess

    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    return registry


# --- state read at scrape time: apps register their collectors (config imports no app) -------------

_STATE = CollectorRegistry(auto_describe=False)


def register_state(collector: Collector) -> None:
    """Add a collector whose figures are read at scrape time on the web endpoint (not the worker's)."""
    _STATE.register(collector)


def exposition(*, with_state: bool) -> bytes:
    body = generate_latest(_process_registry())
    return body + generate_latest(_STATE) if with_state else body


# --- who may read them --------------------------------------------------------------------------------


def _token_in(authorization: str, query_token: str) -> str:
    scheme, _, credentials = authorization.partition(" ")
    return credentials.strip() if scheme.lower() == "bearer" else query_token


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def allowed(*, authorization: str, query_token: str, remote_addr: str, forwarded: bool) -> bool:
    """The token when one is configured; else a direct (not proxied) loopback caller in development."""
    from django.conf import settings

    expected = settings.SESSIONLEDGER_METRICS_TOKEN
    if expected:
        given = _token_in(authorization, query_token)
        return bool(given) and hmac.compare_digest(given.encode(), expected.encode())
    return not settings.PRODUCTION and not forwarded and _is_loopback(remote_addr)


def metrics_view(request: HttpRequest) -> HttpResponse:
    from django.http import Http404, HttpResponse

    permitted = request.method in ("GET", "HEAD") and allowed(
        authorization=request.headers.get("Authorization", ""),
        query_token=request.GET.get("token", ""),
        remote_addr=request.META.get("REMOTE_ADDR", ""),
        forwarded=any(name in request.headers for name in FORWARDING_HEADERS),
    )
    if not permitted:
        raise Http404
    return HttpResponse(exposition(with_state=True), content_type=CONTENT_TYPE_LATEST)


# --- the worker: task counters, timings and its own endpoint ------------------------------------------

_started: dict[str, float] = {}


def task_started(task_id: str | None = None, task: Any = None, **_: Any) -> None:
    from config.logging import ENQUEUED_HEADER, task_header

    if task is None or task_id is None:
        return
    _started[task_id] = time.monotonic()
    TASKS.labels(task.name, "started").inc()
    enqueued = task_header(task, ENQUEUED_HEADER)
    if isinstance(enqueued, int | float):
        QUEUE_LAG.labels(task.name).observe(max(0.0, time.time() - enqueued))


def task_finished(task_id: str | None = None, task: Any = None, **_: Any) -> None:
    started = _started.pop(task_id or "", None)
    if task is not None and started is not None:
        TASK_SECONDS.labels(task.name).observe(time.monotonic() - started)


def _outcome(name: str) -> Callable[..., None]:
    def count(sender: Any = None, **_: Any) -> None:
        if sender is not None:
            TASKS.labels(getattr(sender, "name", str(sender)), name).inc()

    return count


def _worker_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """A WSGI app answering ``/metrics`` under the same access rule as the web endpoint."""
    permitted = environ.get("PATH_INFO") == "/metrics" and allowed(
        authorization=environ.get("HTTP_AUTHORIZATION", ""),
        query_token=parse_qs(environ.get("QUERY_STRING", "")).get("token", [""])[0],
        remote_addr=environ.get("REMOTE_ADDR", ""),
        forwarded=any(environ.get("HTTP_" + h.upper().replace("-", "_")) for h in FORWARDING_HEADERS),
    )
    if not permitted:
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"Not Found\n"]
    start_response("200 OK", [("Content-Type", CONTENT_TYPE_LATEST)])
    return [exposition(with_state=False)]


def serve_worker_metrics(port: int, host: str = "") -> Any:
    """Serve the worker's metrics from a daemon thread; returns the server (tests stop it)."""
    from wsgiref.simple_server import WSGIRequestHandler, make_server

    class QuietHandler(WSGIRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

    server = make_server(host, port, _worker_app, handler_class=QuietHandler)
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
    logger.info("worker metrics on port %d", server.server_port)
    return server


def start_worker_endpoint(**_: Any) -> None:
    """``worker_ready`` (the main worker process): start the endpoint when a port is configured."""
    from django.conf import settings

    if settings.SESSIONLEDGER_WORKER_METRICS_PORT:
        serve_worker_metrics(settings.SESSIONLEDGER_WORKER_METRICS_PORT)


def forget_process(**_: Any) -> None:
    """A pool process exits: its live gauges go (counters stay summed), as prometheus_client requires."""
    if multiprocess_dir():
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(os.getpid())


def connect_celery_signals() -> None:
    from celery import signals

    signals.task_prerun.connect(task_started, weak=False)
    signals.task_postrun.connect(task_finished, weak=False)
    signals.task_success.connect(_outcome("succeeded"), weak=False)
    signals.task_failure.connect(_outcome("failed"), weak=False)
    signals.task_retry.connect(_outcome("retried"), weak=False)
    signals.worker_ready.connect(start_worker_endpoint, weak=False)
    signals.worker_process_shutdown.connect(forget_process, weak=False)

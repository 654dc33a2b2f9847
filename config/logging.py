"""Structured logs, and a request id that follows an upload from the API into its Celery task.

The id lives in a context variable. ``RequestIdMiddleware`` sets it from the incoming
``X-Request-ID`` (when it looks like an id) or a fresh one, and echoes it on the response. Publishing
a task copies it into the message headers; the worker binds it again before the task body runs, so
every log line of ``process_session`` carries the id of the upload that caused it. One filter adds
the id (and the task's id and name) to every record, whatever logger wrote it.

Why a context variable and not ``threading.local``: it is copied into the thread that runs an eager
task and it is reset per task in the worker, so a long-lived worker never carries an old id over.
"""

from __future__ import annotations

import logging
import logging.config
import re
import time
import uuid
from collections.abc import Callable
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # this module is imported by the Celery app before Django is set up
    from django.http import HttpRequest, HttpResponse

HEADER = "X-Request-ID"
TASK_HEADER = "request_id"  # the Celery message header carrying it
ENQUEUED_HEADER = "sl_enqueued_at"  # epoch seconds at publish: the worker's queue-lag metric
_ACCEPTABLE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")  # no spaces, quotes or log-forging newlines

REQUEST_ID: ContextVar[str] = ContextVar("request_id", default="")
TASK: ContextVar[tuple[str, str]] = ContextVar("task", default=("", ""))
_bound: dict[str, tuple[Token, Token]] = {}


def new_request_id() -> str:
    return uuid.uuid4().hex


def request_id_from(incoming: str | None) -> str:
    """The caller's id when it is a sane token (a proxy's or client's), else a new one."""
    return incoming if incoming and _ACCEPTABLE.match(incoming) else new_request_id()


class RequestIdMiddleware:
    """First in the chain, so everything after it (including Django's own 4xx/5xx log lines) has the id.

    The variable is cleared on ``request_finished``, not here: Django logs a refused request after
    the middleware chain has returned.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = request_id_from(request.headers.get(HEADER))
        request.request_id = request_id  # type: ignore[attr-defined]
        REQUEST_ID.set(request_id)
        response = self.get_response(request)
        response[HEADER] = request_id
        return response


def clear_request_id(**_: Any) -> None:
    REQUEST_ID.set("")


class ContextFilter(logging.Filter):
    """Adds ``request_id`` to every record (empty outside a request or task), and in a task its
    ``task_id`` and ``task_name``."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get()
        task_id, task_name = TASK.get()
        if task_id:
            record.task_id, record.task_name = task_id, task_name
        return True


# A URL's secrets: share-link and invitation tokens in the path, ``?token=`` (/metrics) in the query.
# Each run of secret characters is bounded, so the scan stays linear in the line.
_SECRET_IN_URL = re.compile(r"(/share/|/invitations/|[?&]token=)[^\s/?&#\"']{1,512}")
REDACTED = "[redacted]"


def without_secrets(text: str) -> str:
    return _SECRET_IN_URL.sub(lambda m: m.group(1) + REDACTED, text)


class SecretFilter(logging.Filter):
    """Takes URL secrets out of every line the console handler writes: Django's 404 and request lines,
    gunicorn's access log. Only their hash is kept anywhere else (docs/security.md), so a log that
    printed them would be the one place a revoked-looking link could be read back from."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a record whose arguments do not fit its format: logging reports it itself
            return True
        cleaned = without_secrets(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


JSON_FIELDS = "%(levelname)s %(name)s %(message)s %(request_id)s"  # plus any `extra=` fields of the call
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"


def logging_config(*, level: str, fmt: str) -> dict[str, Any]:
    """The ``LOGGING`` dict: one console handler on stderr, JSON lines or plain text, with the context filter."""
    if fmt not in ("json", "text"):
        from config.env import ConfigError

        raise ConfigError(f"LOG_FORMAT={fmt!r} is not valid: expected json or text")
    formatters = {
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": JSON_FIELDS,
            "rename_fields": {"levelname": "level", "name": "logger"},
            "timestamp": "time",  # ISO 8601, UTC
            # Django attaches the request/socket objects to some records; they are not log data.
            "reserved_attrs": [*_reserved_attrs(), "request", "server_time"],
        },
        "text": {"format": TEXT_FORMAT},
    }
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {
            "context": {"()": "config.logging.ContextFilter"},
            "secrets": {"()": "config.logging.SecretFilter"},
        },
        "formatters": {fmt: formatters[fmt]},
        "handlers": {
            "console": {"class": "logging.StreamHandler", "formatter": fmt, "filters": ["context", "secrets"]},
        },
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            # Django's own handlers would print a second, unformatted copy of these.
            "django": {"handlers": ["console"], "level": level, "propagate": False},
            "django.server": {"handlers": ["console"], "level": level, "propagate": False},
        },
    }


def _reserved_attrs() -> list[str]:
    from pythonjsonlogger.core import RESERVED_ATTRS

    return list(RESERVED_ATTRS)


# --- Celery: carry the id in the message, bind it in the worker ------------------------------------


def stamp_task_headers(headers: dict[str, Any] | None = None, **_: Any) -> None:
    """``before_task_publish``: the publishing context's request id and the time of publishing."""
    if headers is None:
        return
    request_id = REQUEST_ID.get()
    if request_id:
        headers.setdefault(TASK_HEADER, request_id)
    headers.setdefault(ENQUEUED_HEADER, time.time())


def task_header(task: Any, name: str) -> Any:
    """A custom message header as the worker sees it (an attribute of the request, or in ``headers``)."""
    request = task.request
    value = getattr(request, name, None)
    if value is None:
        value = (getattr(request, "headers", None) or {}).get(name)
    return value


def bind_task_context(task_id: str | None = None, task: Any = None, **_: Any) -> None:
    """``task_prerun``: the upload's id, else (beat, the shell) one made from the task id."""
    if task is None or task_id is None:
        return
    request_id = task_header(task, TASK_HEADER)
    if not request_id:
        request_id = REQUEST_ID.get() if task.request.is_eager else ""
    _bound[task_id] = (REQUEST_ID.set(request_id or f"task-{task_id}"), TASK.set((task_id, task.name)))


def unbind_task_context(task_id: str | None = None, **_: Any) -> None:
    tokens = _bound.pop(task_id or "", None)
    if tokens is not None:
        REQUEST_ID.reset(tokens[0])
        TASK.reset(tokens[1])


def configure_worker_logging(loglevel: Any = None, **_: Any) -> None:
    """``setup_logging``: the worker logs exactly like the web process (settings.LOGGING), not in
    Celery's own format. ``--loglevel`` still sets the level of Celery's own loggers."""
    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)
    if loglevel:
        logging.getLogger("celery").setLevel(loglevel)


def connect_celery_signals() -> None:
    from celery import signals
    from django.core.signals import request_finished

    signals.before_task_publish.connect(stamp_task_headers, weak=False)
    signals.task_prerun.connect(bind_task_context, weak=False)
    signals.task_postrun.connect(unbind_task_context, weak=False)
    signals.setup_logging.connect(configure_worker_logging, weak=False)
    request_finished.connect(clear_request_id, weak=False, dispatch_uid="sessionledger-clear-request-id")


# --- Sentry (optional) ------------------------------------------------------------------------------


def sentry_init(*, dsn: str, environment: str, traces_sample_rate: str) -> None:
    """Errors to Sentry when ``SENTRY_DSN`` is set; the SDK is imported only then (extra ``sentry``)."""
    from config.env import ConfigError

    try:
        rate = float(traces_sample_rate)
    except ValueError:
        rate = -1.0
    if not 0 <= rate <= 1:
        raise ConfigError(f"SENTRY_TRACES_SAMPLE_RATE={traces_sample_rate!r} is not valid: expected 0 to 1")
    try:
        import sentry_sdk
        from sentry_sdk.integrations.celery import CeleryIntegration
        from sentry_sdk.integrations.django import DjangoIntegration
    except ImportError as exc:
        raise ConfigError(
            "SENTRY_DSN is set but sentry-sdk is not installed: pip install 'sessionledger-server[sentry]'"
        ) from exc
    sentry_sdk.init(
        dsn=dsn,
        environment=environment,
        traces_sample_rate=rate,
        send_default_pii=False,  # transcripts and e-mail addresses stay out of the error reports
        integrations=[DjangoIntegration(), CeleryIntegration()],
        before_send=_tag_request_id,
    )


def _tag_request_id(event: dict[str, Any], hint: dict[str, Any]) -> dict[str, Any]:
    request_id = REQUEST_ID.get()
    if request_id:
        event.setdefault("tags", {})["request_id"] = request_id
    return event

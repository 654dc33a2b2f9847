"""gunicorn's settings for the web service: ``gunicorn config.wsgi … --config python:config.gunicorn``.

- the environment checked once (config/variables.py) before workers start;
- its own log lines (start-up, worker deaths, the access log) in the same format as the app's
  (``LOG_FORMAT``), the access line carrying the request id the app put on the response;
- with ``PROMETHEUS_MULTIPROC_DIR`` set, a worker that exits is marked dead for prometheus_client,
  so /metrics (answered by any worker) adds up every worker's counters and drops dead workers' gauges;
- a worker loads what Django and the pages load on first use before it takes a request
  (config/warmup.py), so that no reader waits for it;
- threaded workers (``gthread``): a worker keeps telling the master it is alive while one of its
  threads streams a long download (a project's export), so ``--timeout`` no longer cuts the download
  short, and one slow request does not hold up the worker's others. Each thread has its own database
  connection: workers × threads per instance (``--threads`` on the command line overrides the 4 here).
"""

from __future__ import annotations

import os
from typing import Any

from config.logging import logging_config
from config.variables import load_or_exit

_env = load_or_exit()  # a malformed variable stops gunicorn's master with one line, before any worker forks
_logging = logging_config(level=_env["LOG_LEVEL"], fmt=_env["LOG_FORMAT"])
_logging["loggers"].update(
    {
        "gunicorn.error": {"handlers": ["console"], "level": "INFO", "propagate": False},
        "gunicorn.access": {"handlers": ["console"], "level": "INFO", "propagate": False},
    }
)
logconfig_dict = _logging
worker_class = "gthread"
threads = 4
access_log_format = '%(h)s "%(r)s" %(s)s %(B)s %(M)sms request_id=%({x-request-id}o)s'


def child_exit(server: Any, worker: Any) -> None:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)


def post_worker_init(worker: Any) -> None:
    from config.warmup import warm_up  # the app is loaded by now: Django is set up

    warm_up()

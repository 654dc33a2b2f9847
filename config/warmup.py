"""What a new web worker loads before it takes its first request (gunicorn's ``post_worker_init``,
config/gunicorn.py).

On its first request Django imports the URLconf (every view, and the redaction rules the ingest
compiles) and, on the first ``reverse()``, builds its table of URL names; a template is compiled on
first use, and Pygments builds its file-name patterns on the first lookup. About 1 s of one request
(bench/bench_worker_start.py), paid by whichever reader a new worker serves first after a deploy, a
scale-up or a restart. The worker pays it here instead, before the master hands it a connection.

``config`` imports no app (docs/design.md "The layers"): an app connects what it loads lazily to
``worker_starting``.
"""

from __future__ import annotations

import logging
import time

from django.dispatch import Signal
from django.urls import get_resolver, reverse

logger = logging.getLogger(__name__)

worker_starting = Signal()


def warm_up() -> None:
    """Load it all now. A URLconf that fails to import stops the worker, as it would fail every request;
    an app's warmer that fails is logged and skipped: what it loads is then loaded on first use."""
    started = time.monotonic()
    patterns = get_resolver().url_patterns  # the first access imports every view, and what they import
    reverse("livez")  # the first reverse() builds the table of every URL's name
    for receiver, outcome in worker_starting.send_robust(sender=None):
        if isinstance(outcome, Exception):
            logger.warning("worker warm-up skipped %s: %r", getattr(receiver, "__qualname__", receiver), outcome)
    logger.info("worker ready: %d URL patterns loaded in %.1f s", len(patterns), time.monotonic() - started)

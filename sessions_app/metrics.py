"""The sessions' state for Prometheus, read from the database at each scrape of ``/metrics``
(registered with config.metrics when the app is ready)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import timedelta

from django.conf import settings
from django.db.models import Count, Min, Q
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily, Metric

from config import metrics
from projects.scoping import unscoped
from sessions_app import fairness
from sessions_app.models import Session, Status

logger = logging.getLogger(__name__)


class SessionStateCollector:
    """Sessions waiting for a worker, those the sweep should have re-queued, and the broker's backlog."""

    def collect(self) -> Iterator[Metric]:
        try:
            processing, stuck, oldest = _processing_state()
        except Exception as exc:  # the scrape must still answer when the database is down
            logger.warning("metrics: cannot read the sessions' state: %s", exc)
        else:
            yield GaugeMetricFamily(
                "sessionledger_sessions_processing", "Sessions waiting to be processed", value=processing
            )
            yield GaugeMetricFamily(
                "sessionledger_sessions_stuck",
                "Sessions processing for longer than SESSIONLEDGER_SWEEP_AFTER_SECONDS",
                value=stuck,
            )
            yield GaugeMetricFamily(
                "sessionledger_processing_oldest_age_seconds",
                "Age of the oldest session still processing (0 when none)",
                value=oldest,
            )
        length = _queue_length()
        if length is not None:
            yield GaugeMetricFamily("sessionledger_queue_length", "Tasks waiting in the Celery queue", value=length)


def _processing_state() -> tuple[int, int, float]:
    now = timezone.now()
    cutoff = now - timedelta(seconds=settings.SESSIONLEDGER_SWEEP_AFTER_SECONDS)
    with unscoped():
        row = Session.objects.filter(status=Status.PROCESSING).aggregate(
            processing=Count("pk"), stuck=Count("pk", filter=Q(created_at__lt=cutoff)), oldest=Min("created_at")
        )
    oldest = (now - row["oldest"]).total_seconds() if row["oldest"] else 0.0
    return row["processing"], row["stuck"], oldest


def _queue_length() -> int | None:
    try:
        client = fairness.redis_client()
        return sum(int(client.llen(key)) for key in fairness.queue_keys(settings.CELERY_TASK_DEFAULT_QUEUE))
    except Exception as exc:
        logger.warning("metrics: cannot read the queue length: %s", exc)
        return None


metrics.register_state(SessionStateCollector())

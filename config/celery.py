import os

from celery import Celery

from config import logging as request_logging
from config import metrics, worker

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("sessionledger")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The request id travels in the task's headers and is bound in the worker's log context;
# task counters, processing time and queue lag are counted in the worker (config/metrics.py).
request_logging.connect_celery_signals()
metrics.connect_celery_signals()
# Liveness from a local heartbeat file, and what an outage left unqueued sent when the broker is back.
worker.connect(app)

"""Emptying the cache between tests without touching another test process's keys.

Django's ``cache.clear()`` on Redis is ``FLUSHDB``: every pytest-xdist worker shares that Redis
database, so it also emptied the other workers' rate-limit counters, kept pages, fairness records and
Celery queues (the broker is the same database) in the middle of their tests. Each test process has
a key prefix of its own (``SESSIONLEDGER_CACHE_PREFIX``, tests/services.py); ``clear`` deletes only
the keys under it.
"""

from __future__ import annotations

import redis
from django.conf import settings

_BATCH = 500


def clear() -> None:
    """Delete every cache key of this test process (Django's key form: ``<prefix>:<version>:<key>``)."""
    prefix = settings.CACHES["default"]["KEY_PREFIX"]
    with redis.Redis.from_url(settings.CACHES["default"]["LOCATION"]) as client:
        keys = list(client.scan_iter(match=f"{prefix}:*", count=_BATCH))
        for start in range(0, len(keys), _BATCH):
            client.delete(*keys[start : start + _BATCH])

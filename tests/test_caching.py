"""Tests empty the cache between them without emptying another test process's (tests/caching.py)."""

from __future__ import annotations

import uuid

import redis
from django.conf import settings
from django.core.cache import cache

from tests import caching


def test_emptying_the_cache_leaves_another_test_processs_keys() -> None:
    cache.set("budget", [1, 2, 3], 60)
    others = f"tests-{uuid.uuid4().hex[:8]}:1:budget"  # another pytest-xdist worker's key form
    with redis.Redis.from_url(settings.CACHES["default"]["LOCATION"]) as client:
        client.set(others, b"counting", ex=60)
        try:
            caching.clear()
            assert cache.get("budget") is None
            assert client.get(others) == b"counting"
        finally:
            client.delete(others)

"""Rate limits per token (or user) — they fail open if the cache is down, never with a 500.

DRF's ``SimpleRateThrottle`` keeps each caller's request times as a pickled list: a GET and a SET,
two round trips per request, and two concurrent requests can both read the same history. On Redis
the same sliding window lives in a sorted set, trimmed, counted and extended by one Lua script: one
round trip, atomic. Other cache backends (none in production) keep DRF's implementation.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

from django.core.cache import cache as default_cache
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView

logger = logging.getLogger(__name__)

# KEYS[1] the caller's window; ARGV: now, window seconds, allowed requests, a unique member.
# Returns {1, now} when the request is counted, {0, oldest} when the window is full.
SLIDING_WINDOW = """
local key = KEYS[1]
local now, window, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
if redis.call('ZCARD', key) >= limit then
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  return {0, oldest[2]}
end
redis.call('ZADD', key, ARGV[1], ARGV[4])
redis.call('EXPIRE', key, math.ceil(window))
return {1, ARGV[1]}
"""


class _PerCaller(SimpleRateThrottle):
    duration: int  # set by SimpleRateThrottle.__init__ from the rate
    num_requests: int
    cache_format = "throttle:%(scope)s:%(ident)s"  # a sorted set on Redis, unlike DRF's pickled list

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        token = getattr(request.auth, "pk", None)
        ident = f"token:{token}" if token else f"user:{request.user.pk}"
        return self.cache_format % {"scope": self.scope, "ident": ident}

    def allow_request(self, request: Request, view: APIView) -> bool:
        try:
            backend = caches["default"] if self.cache is default_cache else self.cache
            if isinstance(backend, RedisCache) and self.rate is not None:
                return self._allow_on_redis(request, view, backend)
            return super().allow_request(request, view)
        except Exception as exc:
            logger.warning("rate limit not applied, cache unavailable: %s", exc)
            return True

    def _allow_on_redis(self, request: Request, view: APIView, cache: Any) -> bool:
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        full_key = cache.make_and_validate_key(key)
        client = cache._cache.get_client(full_key, write=True)
        self.now = self.timer()
        allowed, when = client.eval(
            SLIDING_WINDOW, 1, full_key, repr(self.now), self.duration, self.num_requests, secrets.token_hex(8)
        )
        self.oldest = float(when)
        return bool(allowed)

    def wait(self) -> float | None:
        if not hasattr(self, "oldest"):
            return super().wait()
        return max(0.0, self.duration - (self.now - self.oldest))


class IngestThrottle(_PerCaller):
    scope = "ingest"

    def allow_request(self, request: Request, view: APIView) -> bool:
        return request.method != "POST" or super().allow_request(request, view)


class QueryThrottle(_PerCaller):
    scope = "query"

    def allow_request(self, request: Request, view: APIView) -> bool:
        return request.method == "POST" or super().allow_request(request, view)


class WriteThrottle(_PerCaller):
    """POST, PATCH and DELETE besides uploads: the reads sent as POST (``why``, ``attribution/match``,
    each decompressing up to a few content documents) and the writes (attribution records, share links,
    relinks, deletions). The query budget counts only GETs, so without this one they were unbounded."""

    scope = "write"

    def allow_request(self, request: Request, view: APIView) -> bool:
        return request.method in SAFE_METHODS or super().allow_request(request, view)

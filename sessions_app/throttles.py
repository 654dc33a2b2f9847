"""Rate limits per token (or user) — they fail open if the cache is down, never with a 500."""

from __future__ import annotations

import logging

from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView

logger = logging.getLogger(__name__)


class _PerCaller(SimpleRateThrottle):
    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        token = getattr(request.auth, "pk", None)
        ident = f"token:{token}" if token else f"user:{request.user.pk}"
        return self.cache_format % {"scope": self.scope, "ident": ident}

    def allow_request(self, request: Request, view: APIView) -> bool:
        try:
            return super().allow_request(request, view)
        except Exception as exc:
            logger.warning("rate limit not applied, cache unavailable: %s", exc)
            return True


class IngestThrottle(_PerCaller):
    scope = "ingest"

    def allow_request(self, request: Request, view: APIView) -> bool:
        return request.method != "POST" or super().allow_request(request, view)


class QueryThrottle(_PerCaller):
    scope = "query"

    def allow_request(self, request: Request, view: APIView) -> bool:
        return request.method == "POST" or super().allow_request(request, view)

"""Budgets for the sensitive actions of projects/: minting tokens, starting and approving device logins.

One attempt is counted against every identity it comes from (the user, the client address), in the
cache, with DRF's sliding-window throttle — the same mechanism as the API's own rate limits. The rate
is read from settings at each attempt, so operators (and tests) can change it. A budget fails open,
with a warning, when the cache is down: Redis down already stops uploads and logins are rare.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from rest_framework.throttling import BaseThrottle, SimpleRateThrottle

from projects.errors import DomainError

logger = logging.getLogger(__name__)


class _Budget(SimpleRateThrottle):
    cache_format = "limit:%(scope)s:%(ident)s"

    def __init__(self, scope: str, rate: str, ident: str) -> None:
        self.scope, self.rate, self.ident = scope, rate, ident
        self.num_requests, self.duration = self.parse_rate(rate)

    def get_cache_key(self, request: Any, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.ident}

    def spend(self) -> bool:
        try:
            # DRF's rate bookkeeping without a request: get_cache_key above ignores both arguments.
            return self.allow_request(None, None)  # type: ignore[arg-type]
        except Exception as exc:
            logger.warning("budget %s not applied, cache unavailable: %s", self.scope, exc)
            return True


def client_address(request: HttpRequest) -> str:
    """The caller's address: ``REMOTE_ADDR``, or behind ``SESSIONLEDGER_PROXY_COUNT`` proxies the address the
    outermost of them saw (DRF's rule; a client cannot forge it by sending its own X-Forwarded-For)."""
    return BaseThrottle().get_ident(request) or ""  # type: ignore[arg-type]  # reads request.META only


def spend(*, scope: str, rate_setting: str, idents: Iterable[str]) -> None:
    """Count one attempt against each identity; a 429 ``throttled`` DomainError once any budget is spent."""
    rate = getattr(settings, rate_setting)
    for ident in idents:
        budget = _Budget(scope, rate, ident)
        if not budget.spend():
            wait = max(1, math.ceil(budget.wait() or 1))
            raise DomainError(
                "throttled", f"Too many attempts; try again in {wait} seconds.", status_code=429, retry_after=wait
            )

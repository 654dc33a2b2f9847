"""Model prices for insights' estimated cost: a table the operator edits, no code change needed.

``SESSIONLEDGER_MODEL_PRICES`` (an environment variable holding JSON, read into settings) maps a
model name *prefix* to US dollars per million tokens ``[input, output, cache write, cache read]``;
the longest prefix matching a session's model wins (compared in lower case, after any ``provider/``
part, so ``gpt-5-codex``, ``gpt-5-2025-08-07`` and ``openai/gpt-5`` all match ``gpt-5``). A model no
prefix matches has no cost: insights count its tokens as *unpriced* and say so, never "$0.00".
The defaults below are list prices published by the vendors when this table was written; an
operator with negotiated prices replaces them, e.g.

    SESSIONLEDGER_MODEL_PRICES='{"claude-opus-4-6": [5, 25, 6.25, 0.5], "claude-sonnet-4": [3, 15, 3.75, 0.3]}'

Costs are computed when insights are read (from token totals per model kept with each day's
facts), so a price change applies to every past session at once.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from django.conf import settings

logger = logging.getLogger(__name__)

DEFAULT_PRICES: dict[str, list[float]] = {
    "claude-opus-4-5": [5, 25, 6.25, 0.5],
    "claude-opus-4-6": [5, 25, 6.25, 0.5],
    "claude-opus-4": [15, 75, 18.75, 1.5],
    "claude-sonnet-4": [3, 15, 3.75, 0.3],
    "claude-3-7-sonnet": [3, 15, 3.75, 0.3],
    "claude-3-5-sonnet": [3, 15, 3.75, 0.3],
    "claude-haiku-4": [1, 5, 1.25, 0.1],
    "claude-3-5-haiku": [0.8, 4, 1, 0.08],
    "gpt-5": [1.25, 10, 0, 0.125],
}
PER = 1_000_000


@lru_cache(maxsize=1)
def table() -> list[tuple[str, tuple[float, ...]]]:  # four prices each, checked above
    """(prefix, prices) longest prefix first; a malformed setting falls back to the defaults, logged."""
    raw = getattr(settings, "SESSIONLEDGER_MODEL_PRICES", "") or ""
    prices: dict[str, list[float]] = DEFAULT_PRICES
    if raw:
        try:
            loaded = json.loads(raw)
            if not isinstance(loaded, dict) or not all(
                isinstance(v, list) and len(v) == 4 and all(isinstance(x, int | float) and x >= 0 for x in v)
                for v in loaded.values()
            ):
                raise ValueError("expected {prefix: [input, output, cache write, cache read]}")
            prices = loaded
        except ValueError as exc:
            logger.error("SESSIONLEDGER_MODEL_PRICES ignored: %s", exc)
    return sorted(((str(k), tuple(float(x) for x in v)) for k, v in prices.items()), key=lambda p: -len(p[0]))


def price_for(model: str) -> tuple[float, ...] | None:
    name = model.strip().lower().rpartition("/")[2]
    return next((prices for prefix, prices in table() if name.startswith(prefix.lower())), None) if name else None


def cost(
    model: str,
    *,
    input_tokens: int = 0,
    output_tokens: int = 0,
    cache_write_tokens: int = 0,
    cache_read_tokens: int = 0,
) -> float:
    """US dollars for these tokens of ``model``; 0 for a model the table does not know (``price_for``
    is None: the caller reports those tokens as unpriced)."""
    prices = price_for(model)
    if prices is None:
        return 0.0
    counts = (input_tokens, output_tokens, cache_write_tokens, cache_read_tokens)
    return sum(n * p for n, p in zip(counts, prices, strict=True)) / PER


@dataclass
class Usage:
    """Tokens of several sessions (their digests' ``effort.tokens``) and what they cost."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_tokens: int = 0  # of models the price table does not know: no cost, said so

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_write_tokens + self.cache_read_tokens


def usage_of(per_session: Iterable[Any]) -> Usage:
    """The sum of sessions' ``{model: [input, output, cache write, cache read]}`` (``digest["effort"]["tokens"]``,
    absent on sessions processed before it existed); a value that is not a count is skipped."""
    usage = Usage()
    for tokens in per_session:
        for model, counts in (tokens or {}).items() if isinstance(tokens, dict) else ():
            if not isinstance(counts, list) or len(counts) != 4 or not all(_count(n) for n in counts):
                continue
            a, b, c, d = counts
            usage.input_tokens += a
            usage.output_tokens += b
            usage.cache_write_tokens += c
            usage.cache_read_tokens += d
            usage.cost_usd += cost(
                str(model), input_tokens=a, output_tokens=b, cache_write_tokens=c, cache_read_tokens=d
            )
            if price_for(str(model)) is None:
                usage.unpriced_tokens += a + b + c + d
    return usage


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0

"""Typed access to environment variables.

Settings fail loudly at startup on a malformed value instead of misbehaving later. Every
variable may also be given as ``NAME_FILE`` pointing at a file holding the value, which is how
container secrets are usually mounted.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

_MISSING = object()
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class ConfigError(RuntimeError):
    """A setting from the environment is missing or malformed."""


def raw(name: str) -> str | None:
    """The variable's text, from ``NAME`` or from the file named by ``NAME_FILE``."""
    if name in os.environ:
        return os.environ[name]
    path = os.environ.get(f"{name}_FILE")
    if path is None:
        return None
    try:
        return Path(path).read_text().strip()
    except OSError as exc:
        raise ConfigError(f"{name}_FILE={path!r} cannot be read: {exc}") from exc


def _typed(name: str, default: object, parse: Callable[[str], T]) -> T:
    value = raw(name)
    if value is None:
        if default is _MISSING:
            raise ConfigError(f"{name} must be set")
        return default  # type: ignore[return-value]
    try:
        return parse(value)
    except ValueError as exc:
        raise ConfigError(f"{name}={value!r} is not valid: {exc}") from exc


def string(name: str, default: object = _MISSING) -> str:
    return _typed(name, default, str)


def integer(name: str, default: object = _MISSING) -> int:
    return _typed(name, default, int)


def parse_bool(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ValueError("expected one of 1/0, true/false, yes/no, on/off")


def boolean(name: str, default: object = _MISSING) -> bool:
    return _typed(name, default, parse_bool)


def parse_csv(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def csv(name: str, default: object = _MISSING) -> list[str]:
    return _typed(name, default, parse_csv)


def choice(name: str, choices: tuple[str, ...], default: object = _MISSING) -> str:
    def parse(value: str) -> str:
        if value not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}")
        return value

    return _typed(name, default, parse)


_PERIODS = {"s", "sec", "second", "m", "min", "minute", "h", "hour", "d", "day"}


def parse_rate(value: str) -> str:
    """A rate limit such as ``10/min``: a positive count per s, min, hour or day (DRF's notation)."""
    count, _, period = value.strip().partition("/")
    if not (count.isascii() and count.isdigit() and int(count) > 0) or period.strip() not in _PERIODS:
        raise ValueError("expected a count per period, e.g. 10/min (periods: s, min, hour, day)")
    return f"{int(count)}/{period.strip()}"


def rate(name: str, default: object = _MISSING) -> str:
    return _typed(name, default, parse_rate)


def json_list(value: str, what: str) -> list[Any]:
    """``value`` as a JSON list (empty text: none); ValueError naming ``what`` otherwise."""
    import json

    try:
        items = json.loads(value) if value.strip() else []
    except json.JSONDecodeError:
        raise ValueError(f"expected a JSON list of {what} (malformed JSON)") from None
    if not isinstance(items, list):
        raise ValueError(f"expected a JSON list of {what}")
    return items

"""Every call to a forge's API: a timeout on each request, retries that honour the forge's rate
limits (``Retry-After``; ``x-ratelimit-remaining: 0`` with ``x-ratelimit-reset``), and pagination
by the ``Link: rel="next"`` header both GitHub and GitLab send."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import requests

TIMEOUT = (5, 20)  # connect, read (seconds)
ATTEMPTS = 4
MAX_WAIT = 60.0  # longer waits are the task's to schedule, not this thread's
RETRIED = {429, 500, 502, 503, 504}


class ForgeError(Exception):
    """The forge refused or kept failing; worth retrying the whole task later."""


class Gone(ForgeError):
    """404 or 410: what was asked for is not there (a deleted comment, an unknown commit)."""


def _wait(response: requests.Response, attempt: int, now: Callable[[], float]) -> float | None:
    """Seconds to wait before the next attempt, or None when the response is final."""
    headers = response.headers
    limited = response.status_code == 403 and ("retry-after" in headers or headers.get("x-ratelimit-remaining") == "0")
    if response.status_code not in RETRIED and not limited:
        return None
    if "retry-after" in headers:
        try:
            return float(headers["retry-after"])
        except ValueError:
            pass
    if headers.get("x-ratelimit-remaining") == "0" and "x-ratelimit-reset" in headers:
        try:
            return max(0.0, float(headers["x-ratelimit-reset"]) - now())
        except ValueError:
            pass
    return float(2**attempt)


def request(
    session: requests.Session,
    method: str,
    url: str,
    *,
    sleep: Callable[[float], None] = time.sleep,
    now: Callable[[], float] = time.time,
    **options: Any,
) -> requests.Response:
    for attempt in range(ATTEMPTS):
        try:
            response = session.request(method, url, timeout=TIMEOUT, allow_redirects=False, **options)
        except requests.RequestException as exc:
            if attempt == ATTEMPTS - 1:
                raise ForgeError(f"{method} {url}: {exc}") from exc
            sleep(float(2**attempt))
            continue
        wait = _wait(response, attempt, now)
        if wait is None:
            if response.status_code in (404, 410):
                raise Gone(f"{method} {url}: HTTP {response.status_code}")
            if response.status_code >= 400:
                raise ForgeError(f"{method} {url}: HTTP {response.status_code}")
            return response
        if wait > MAX_WAIT or attempt == ATTEMPTS - 1:
            raise ForgeError(f"{method} {url}: HTTP {response.status_code}, retry in {wait:.0f}s")
        sleep(wait)
    raise AssertionError("unreachable")


def pages(
    session: requests.Session, base: str, path: str, *, params: dict[str, Any], key: str = "", **options: Any
) -> Iterator[Any]:
    """Each item of every page, following ``rel="next"`` (it carries the query on) while it stays on ``base``.
    ``key``: the list is that member of each page's object (GitHub's compare: ``commits``)."""
    next_url: str | None = base + path
    query: dict[str, Any] | None = params
    while next_url:
        response = request(session, "GET", next_url, params=query, **options)
        items = response.json()
        if key and isinstance(items, dict):
            items = items.get(key)
        if not isinstance(items, list):
            raise ForgeError(f"GET {next_url}: expected a list")
        yield from items
        next_url = response.links.get("next", {}).get("url")
        if next_url and not next_url.startswith(base + "/"):
            raise ForgeError(f"GET {path}: the next page points off the forge")
        query = None


def commit_id(value: str) -> str:
    """A commit id for a URL path: hex only (a forge's string, or one stored from it, is hostile)."""
    if not value or len(value) > 64 or any(c not in "0123456789abcdefABCDEF" for c in value):
        raise ForgeError(f"not a commit id: {value[:64]!r}")
    return value


def comment_write(
    session: requests.Session,
    base: str,
    path: str,
    *,
    edit: Callable[[str], tuple[str, str]],
    comment_id: str,
    marker: str,
    body: str,
) -> str:
    """Edit comment ``comment_id`` — without one, the first comment under ``path`` holding ``marker`` —
    or create it under ``path``; its id. ``edit(id)`` is the forge's (method, URL) that edits one."""
    if not comment_id:
        for comment in pages(session, base, path, params={"per_page": 100}):
            if marker in str(comment.get("body") or ""):
                comment_id = str(int(comment["id"]))
                break
    if comment_id:
        method, url = edit(comment_id)
        try:
            request(session, method, url, json={"body": body})
            return comment_id
        except Gone:
            pass  # someone deleted it: write a new one
    response = request(session, "POST", base + path, json={"body": body})
    return str(int(response.json()["id"]))

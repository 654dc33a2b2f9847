"""The Sessionledger REST API over `urllib` (standard library only, docs/design.md §7).

Every refusal becomes an `ApiError` carrying what the uploader needs to decide: the status, the
server's error code and message, `Retry-After`, and `error.limit` on a 413. A server that cannot
be reached is status 0 (`unreachable`), handled like a 503.
"""

from __future__ import annotations

import json
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable
from typing import Any

from sessionledger import __version__

API = "/api/v1"
USER_AGENT = f"sessionledger/{__version__}"


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, *, retry_after: float | None = None, body: Any = None):
        super().__init__(f"{status} {code}: {message}" if status else message)
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after
        self.body = body if isinstance(body, dict) else {}

    @property
    def error(self) -> dict:
        error = self.body.get("error")
        return error if isinstance(error, dict) else {}

    @property
    def transient(self) -> bool:
        """Worth retrying later: unreachable, rate limited, or a server-side failure."""
        return self.status in (0, 408, 429) or self.status >= 500


class Client:
    def __init__(self, server: str, token: str = "", *, timeout: float = 60) -> None:
        if not server:
            raise ApiError(0, "no_server", "No server configured: run `sessionledger login --server URL`.")
        self.server = server.rstrip("/")
        self.token = token
        self.timeout = timeout

    def url(self, path: str, params: dict[str, Any] | None = None) -> str:
        query = {k: v for k, v in (params or {}).items() if v not in (None, "")}
        suffix = "?" + urllib.parse.urlencode(query, doseq=True) if query else ""
        return f"{self.server}{API}{path}{suffix}"

    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return self._json(urllib.request.Request(self.url(path, params), method="GET"))

    def get_bytes(self, path: str, params: dict[str, Any] | None = None) -> bytes:
        """GET a body that is not JSON (a stitched transcript); refusals raise ApiError alike."""
        return self._send(urllib.request.Request(self.url(path, params), method="GET"), decode=False)[1]

    def post_json(self, path: str, body: dict[str, Any]) -> Any:
        data = json.dumps(body).encode()
        request = urllib.request.Request(self.url(path), data=data, method="POST")
        request.add_header("Content-Type", "application/json")
        return self._json(request)

    def post_stream(
        self, path: str, body: Iterable[bytes], length: int, content_type: str, headers: dict[str, str]
    ) -> tuple[int, Any]:
        """POST a body streamed from an iterable (the queued gzip files); (status, JSON reply)."""
        request = urllib.request.Request(self.url(path), data=body, method="POST")
        request.add_header("Content-Type", content_type)
        request.add_header("Content-Length", str(length))
        for name, value in headers.items():
            request.add_header(name, value)
        return self._send(request)

    def _json(self, request: urllib.request.Request) -> Any:
        return self._send(request)[1]

    def _send(self, request: urllib.request.Request, *, decode: bool = True) -> tuple[int, Any]:
        request.add_header("Accept", "application/json")
        request.add_header("User-Agent", USER_AGENT)
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                _check_version(self.server, response.headers.get(VERSION_HEADER))
                body = response.read()
                return response.status, (_decode(body) if decode else body)
        except urllib.error.HTTPError as exc:
            raise _http_error(exc) from None
        except (TimeoutError, urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ApiError(0, "unreachable", f"cannot reach {self.server}: {reason}") from None


VERSION_HEADER = "X-Sessionledger-Version"
_VERSION = re.compile(r"[0-9][0-9A-Za-z.+-]{0,39}")  # anything else from a server is not printed
_warned: set[str] = set()


def _check_version(server: str, theirs: str | None) -> None:
    """Warn once per process when the server runs another version than this client."""
    if not theirs or theirs == __version__ or server in _warned or not _VERSION.fullmatch(theirs):
        return
    _warned.add(server)
    print(
        f"sessionledger: this client is {__version__}, the server runs {theirs}; the matching client:\n"
        f"  pipx install --force {server}/client/sessionledger-{theirs}-py3-none-any.whl",
        file=sys.stderr,
    )


def _decode(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return {"text": raw.decode("utf-8", "replace")[:500]}


def _http_error(exc: urllib.error.HTTPError) -> ApiError:
    try:
        body = _decode(exc.read())
    except OSError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    error = error if isinstance(error, dict) else {}
    message = str(error.get("message") or exc.reason or "request failed")
    return ApiError(
        exc.code,
        str(error.get("code") or "http_error"),
        message,
        retry_after=_retry_after(exc.headers.get("Retry-After") if exc.headers else None),
        body=body,
    )


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    if value.strip().isdigit():
        return float(value.strip())
    from email.utils import parsedate_to_datetime
    from time import time

    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time())
    except (TypeError, ValueError):
        return None

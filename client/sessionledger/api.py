"""The Sessionledger REST API over `urllib` (standard library only, docs/design.md §7).

Every refusal becomes an `ApiError` carrying what the uploader needs to decide: the status, the
server's error code and message, `Retry-After`, and `error.limit` on a 413. A server that cannot
be reached is status 0 (`unreachable`), handled like a 503.

Every request has a total deadline (`timeout`, and never past `until`): urlopen's own timeout is
per socket operation, so a server that trickles a byte every few seconds would hold a caller for
ever. A timer shuts the request's sockets down when the deadline passes, whatever phase the
request is in (sending the body, waiting for headers, reading the body); the request then fails
as `timeout`, status 0, handled like an unreachable server (docs/client.md "Deadlines").
Name resolution is inside the deadline too: `getaddrinfo` cannot be interrupted and a broken
resolver can block it for minutes, so it runs in a daemon thread the request stops waiting for.
"""

from __future__ import annotations

import contextlib
import functools
import http.client
import json
import re
import socket
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from sessionledger import __version__

if TYPE_CHECKING:
    import threading

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
    def __init__(
        self,
        server: str,
        token: str = "",
        *,
        timeout: float = 60,
        transfer_timeout: float | None = None,
        until: float | None = None,
    ) -> None:
        """`timeout`: seconds each request may take in all; `transfer_timeout`: the same for the
        requests that move a transcript (upload, download), if longer; `until`: a
        `time.monotonic()` instant no request may outlive (the uploader's run, a command's)."""
        if not server:
            raise ApiError(0, "no_server", "No server configured: run `sessionledger login --server URL`.")
        self.server = server.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.transfer_timeout = max(timeout, transfer_timeout or timeout)
        self.until = until

    def url(self, path: str, params: dict[str, Any] | None = None) -> str:
        query = {k: v for k, v in (params or {}).items() if v not in (None, "")}
        suffix = "?" + urllib.parse.urlencode(query, doseq=True) if query else ""
        return f"{self.server}{API}{path}{suffix}"

    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return self._json(urllib.request.Request(self.url(path, params), method="GET"))

    def get_bytes(self, path: str, params: dict[str, Any] | None = None) -> bytes:
        """GET a body that is not JSON (a stitched transcript); refusals raise ApiError alike."""
        request = urllib.request.Request(self.url(path, params), method="GET")
        return self._send(request, decode=False, timeout=self.transfer_timeout)[1]

    def post_json(self, path: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
        return self.send_json(path, body, headers)[1]

    def send_json(
        self, path: str, body: dict[str, Any] | None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        """POST a JSON body (None: an empty one); (status, JSON reply)."""
        data = json.dumps(body).encode() if body is not None else b""
        request = urllib.request.Request(self.url(path), data=data, method="POST")
        request.add_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        return self._send(request)

    def put_bytes(self, path: str, data: bytes) -> Any:
        """PUT raw bytes (a resumable upload's part) within the transfer deadline; the JSON reply."""
        request = urllib.request.Request(self.url(path), data=data, method="PUT")
        request.add_header("Content-Type", "application/octet-stream")
        return self._send(request, timeout=self.transfer_timeout)[1]

    def post_stream(
        self, path: str, body: Iterable[bytes], length: int, content_type: str, headers: dict[str, str]
    ) -> tuple[int, Any]:
        """POST a body streamed from an iterable (the queued gzip files); (status, JSON reply)."""
        request = urllib.request.Request(self.url(path), data=body, method="POST")
        request.add_header("Content-Type", content_type)
        request.add_header("Content-Length", str(length))
        for name, value in headers.items():
            request.add_header(name, value)
        return self._send(request, timeout=self.transfer_timeout)

    def _json(self, request: urllib.request.Request) -> Any:
        return self._send(request)[1]

    def _send(
        self, request: urllib.request.Request, *, decode: bool = True, timeout: float | None = None
    ) -> tuple[int, Any]:
        request.add_header("Accept", "application/json")
        request.add_header("User-Agent", USER_AGENT)
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        budget = timeout or self.timeout
        budget = budget if self.until is None else min(budget, self.until - time.monotonic())
        if budget <= 0:
            raise ApiError(0, "timeout", f"no time left to ask {self.server}")
        watch = Deadline(budget)
        try:
            with watch.opener().open(request, timeout=budget) as response:
                _check_version(self.server, response.headers.get(VERSION_HEADER))
                body = response.read()
                watch.check()  # a body cut short by the deadline is not the body
                return response.status, (_decode(body) if decode else body)
        except urllib.error.HTTPError as exc:
            if watch.expired:
                raise watch.error(self.server) from None
            raise _http_error(exc) from None
        except (TimeoutError, urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as exc:
            if watch.expired or isinstance(exc, TimeoutError):
                raise watch.error(self.server) from None
            reason = getattr(exc, "reason", exc)
            raise ApiError(0, "unreachable", f"cannot reach {self.server}: {reason}") from None
        finally:
            watch.cancel()


class Deadline:
    """A total deadline for one request: at `seconds` every socket it opened is shut down."""

    def __init__(self, seconds: float) -> None:
        import threading

        self.seconds = seconds
        self.ends = time.monotonic() + seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer: threading.Timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def opener(self) -> urllib.request.OpenerDirector:
        return urllib.request.build_opener(_HTTPHandler(self), _HTTPSHandler(self))

    def add(self, sock: socket.socket | None) -> None:
        with self._lock:
            if sock is not None:
                self._sockets.append(sock)
            if self.expired:
                self._shut()

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            self._shut()

    def _shut(self) -> None:
        for sock in self._sockets:
            with contextlib.suppress(OSError):  # the plain socket's: TLS's own would drop its state
                socket.socket.shutdown(sock, socket.SHUT_RDWR)

    def check(self) -> None:
        if self.expired:
            raise TimeoutError

    def left(self) -> float:
        return max(0.0, self.ends - time.monotonic())

    def resolve(self, host: str, port: int) -> list[tuple[Any, ...]]:
        """`getaddrinfo` bounded by the deadline: a literal address at once, a name in a daemon
        thread that is left behind (it ends when the resolver gives up) when the deadline passes."""
        try:
            return socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM, 0, socket.AI_NUMERICHOST)
        except (socket.gaierror, UnicodeError):
            pass  # a name
        import threading

        found: list[Any] = []
        thread = threading.Thread(target=_lookup, args=(host, port, found), daemon=True, name="sessionledger-dns")
        thread.start()
        thread.join(self.left())
        if not found:
            self._expire()
            raise TimeoutError(f"resolving {host} took longer than the deadline")
        if isinstance(found[0], BaseException):
            raise found[0]
        return list(found[0])

    def connect(
        self, address: tuple[str, int], timeout: Any = None, source_address: Any = None, **_: Any
    ) -> socket.socket:
        """`socket.create_connection` with the lookup bounded and no connect past the deadline."""
        error: OSError | None = None
        for family, kind, proto, _name, target in self.resolve(*address):
            left = self.left()
            if left <= 0:
                raise TimeoutError(f"no time left to connect to {address[0]}")
            sock = socket.socket(family, kind, proto)
            try:
                sock.settimeout(min(timeout, left) if isinstance(timeout, int | float) else left)
                if source_address:
                    sock.bind(source_address)
                sock.connect(target)
                return sock
            except OSError as exc:
                error = exc
                sock.close()
        raise error or OSError(f"no address for {address[0]}")

    def error(self, server: str) -> ApiError:
        return ApiError(0, "timeout", f"{server} did not answer within {self.seconds:.0f} s")

    def cancel(self) -> None:
        self._timer.cancel()
        self._timer.join()  # no thread left behind: a hook may fork the uploader right after


def _lookup(host: str, port: int, found: list[Any]) -> None:
    try:
        found.append(socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM))
    except BaseException as exc:  # handed to the waiting request
        found.append(exc)


def _watched(deadline: Deadline, base: type[http.client.HTTPConnection]) -> Any:
    def make(host: str, **kwargs: Any) -> http.client.HTTPConnection:
        connection = base(host, **kwargs)
        # http.client's one seam between a connection and `socket.create_connection` (private by
        # name): the alternative, re-implementing `connect` with its proxy tunnel, copies more.
        connection._create_connection = deadline.connect  # type: ignore[attr-defined]
        connect = connection.connect

        def watched_connect() -> None:
            connect()
            deadline.add(connection.sock)

        connection.connect = watched_connect  # type: ignore[method-assign]
        return connection

    return make


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_watched(self.deadline, http.client.HTTPConnection), req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_watched(self.deadline, http.client.HTTPSConnection), req, context=tls_context())


@functools.cache  # made at the process's first HTTPS request, then shared by all
def tls_context() -> ssl.SSLContext:
    """The TLS context of every HTTPS request of this process: certificates and host names
    verified against the system's trusted certificates (or `SSL_CERT_FILE`/`SSL_CERT_DIR`),
    loaded once. Without it each connection made its own and read the whole CA bundle again."""
    return ssl.create_default_context()


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

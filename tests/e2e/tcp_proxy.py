"""A proxy in front of PostgreSQL that can "restart" it: drop every connection and refuse
new ones for a while, exactly what the application sees when the database restarts. In front
of any server it can also answer slowly (``delay``): a bucket on a slow link.

It listens on a loopback TCP port and forwards to the server's TCP address or, for the
embedded PostgreSQL of `make test` (which listens only on a Unix socket), to its socket file.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time

Target = tuple[str, int] | str  # (host, port) or the path of a Unix socket


def database_target(host: str, port: str | int | None) -> Target:
    """Where a PostgreSQL server with Django's HOST/PORT settings accepts connections."""
    port = int(port or 5432)
    if not host or host.startswith("/"):  # libpq: no host or a directory means a Unix socket
        return f"{host or '/var/run/postgresql'}/.s.PGSQL.{port}"
    return (host, port)


def _connect(target: Target) -> socket.socket:
    if isinstance(target, str):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(target)
        return sock
    return socket.create_connection(target)


class OutageProxy:
    def __init__(self, target: Target, *, delay: float = 0.0) -> None:
        """``delay``: seconds each chunk of the server's answers waits before it is passed on."""
        self.target = target
        self.delay = delay
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.available = threading.Event()
        self.available.set()
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def outage(self) -> None:
        """Drop every connection; new ones are cut at once until ``restore``."""
        self.available.clear()
        with self._lock:
            for sock in self._open:
                _close(sock)
            self._open.clear()

    def restore(self) -> None:
        self.available.set()

    def _accept(self) -> None:
        while True:
            client, _ = self.listener.accept()
            if not self.available.is_set():
                _close(client)
                continue
            try:
                upstream = _connect(self.target)
            except OSError:
                _close(client)
                continue
            with self._lock:
                self._open.update((client, upstream))
            threading.Thread(target=_pump, args=(client, upstream), daemon=True).start()
            threading.Thread(target=_pump, args=(upstream, client, self.delay), daemon=True).start()


def _pump(source: socket.socket, sink: socket.socket, delay: float = 0.0) -> None:
    try:
        while data := source.recv(65536):
            time.sleep(delay)
            sink.sendall(data)
    except OSError:
        pass
    finally:
        _close(source)
        _close(sink)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()


class Blackhole:
    """A server that accepts every connection and never answers (a blackholed dependency: a firewall
    dropping replies, a wedged load balancer), so only a client's own timeouts end a call."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self._held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def connections(self) -> int:
        return len(self._held)

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = self.listener.accept()
                self._held.append(client)  # read nothing, answer nothing

    def close(self) -> None:
        _close(self.listener)
        for sock in self._held:
            _close(sock)


def s3_storage_at(endpoint: str, read_timeout: int | None = 1) -> dict[str, object]:
    """The configured S3 storage (a ``STORAGES`` entry) at another endpoint; its read timeout scaled down
    (a second by default) so a test that blackholes it stays short, or as configured (None)."""
    from botocore.config import Config
    from django.conf import settings

    options = {**settings.STORAGES["blobs"]["OPTIONS"], "endpoint_url": endpoint}
    if read_timeout is not None:
        options["client_config"] = options["client_config"].merge(Config(read_timeout=read_timeout))
    return {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": options}

"""A server on loopback that is slow the way real ones are: it accepts the connection, reads the
request, sends its headers and then one byte of body every 0.2 s, for ever. `recover()` makes it
a faithful proxy to the real server from then on (requests already trickling keep trickling)."""

from __future__ import annotations

import socket
import threading
import time
from urllib.parse import urlsplit

HEADERS = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n"


class _LoopbackProxy:
    """A listener on loopback whose every connection goes to ``handle`` in a thread of its own."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.closed = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self.closed.set()
        self.listener.close()

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.handle, args=(conn,), daemon=True).start()

    def handle(self, conn: socket.socket) -> None:
        raise NotImplementedError


class SlowServer(_LoopbackProxy):
    def __init__(self, upstream: str) -> None:
        self.recovered = threading.Event()
        self.trickled = 0  # requests answered by trickling
        super().__init__(upstream)

    def recover(self) -> None:
        self.recovered.set()

    def handle(self, conn: socket.socket) -> None:
        (self._proxy if self.recovered.is_set() else self._trickle)(conn)

    def _trickle(self, conn: socket.socket) -> None:
        self.trickled += 1
        with conn:
            try:
                conn.recv(65536)  # the request line and headers (a body may follow unread)
                conn.sendall(HEADERS)
                while not self.closed.is_set():
                    conn.sendall(b" ")
                    time.sleep(0.2)
            except OSError:
                return  # the client gave up: what it should do

    def _proxy(self, conn: socket.socket) -> None:
        with conn, socket.create_connection(self.upstream) as up:
            threading.Thread(target=_pump, args=(up, conn), daemon=True).start()
            _pump(conn, up)

    # a recovered server answers every request in full; `_pump` copies one direction


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass


class ThrottledProxy(_LoopbackProxy):
    """A faithful proxy to `upstream` whose uplink carries at most `rate` bytes a second: a request
    body takes its time to arrive, as on a slow link; the answers come back at full speed."""

    def __init__(self, upstream: str, rate: int) -> None:
        self.rate = rate
        self.received = 0  # bytes of requests passed on so far
        super().__init__(upstream)

    def handle(self, conn: socket.socket) -> None:
        # A small receive buffer keeps the sender's bytes in the sender, not in the kernel.
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
        with conn, socket.create_connection(self.upstream) as up:
            threading.Thread(target=_pump, args=(up, conn), daemon=True).start()
            step = max(1, self.rate // 10)
            try:
                while data := conn.recv(step):
                    up.sendall(data)
                    self.received += len(data)
                    time.sleep(0.1)
                up.shutdown(socket.SHUT_WR)
            except OSError:
                pass


class CuttingProxy(ThrottledProxy):
    """A throttled link that drops every `cut_every` bytes of requests, as a flaky Wi-Fi or VPN does:
    the connection carrying that byte is closed on both sides mid-request, and the next one works.
    `exchanges` lists each connection's request line and the status line its answer began with
    (None: it was cut before one came)."""

    def __init__(self, upstream: str, rate: int, cut_every: int) -> None:
        self.cut_every = cut_every
        self.cuts = 0
        self.exchanges: list[list[str | None]] = []
        self._lock = threading.Lock()
        super().__init__(upstream, rate)

    def handle(self, conn: socket.socket) -> None:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
        exchange: list[str | None] = [None, None]
        self.exchanges.append(exchange)
        with conn, socket.create_connection(self.upstream) as up:
            threading.Thread(target=_answer, args=(up, conn, exchange), daemon=True).start()
            step = max(1, self.rate // 10)
            try:
                while data := conn.recv(step):
                    exchange[0] = exchange[0] or data.split(b"\r\n", 1)[0].decode("latin-1")
                    with self._lock:
                        before, self.received = self.received, self.received + len(data)
                        cut = before // self.cut_every != self.received // self.cut_every
                        self.cuts += cut
                    if cut:  # the link drops: neither side gets another byte of this connection
                        for side in (conn, up):
                            side.shutdown(socket.SHUT_RDWR)
                        return
                    up.sendall(data)
                    time.sleep(0.1)
                up.shutdown(socket.SHUT_WR)
            except OSError:
                pass


def _answer(source: socket.socket, sink: socket.socket, exchange: list[str | None]) -> None:
    """`_pump` the answer back, noting its status line."""
    try:
        while data := source.recv(65536):
            exchange[1] = exchange[1] or data.split(b"\r\n", 1)[0].decode("latin-1")
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass

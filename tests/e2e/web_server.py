"""gunicorn serving ``config.wsgi`` on the test database, as production runs the web service."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import requests
from django.conf import settings


def tests_database_url() -> str:
    """``DATABASE_URL`` naming the database this test run made (what a server process must use)."""
    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(parts._replace(path="/" + settings.DATABASES["default"]["NAME"]))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def gunicorn(*args: str, **env: str) -> Iterator[str]:
    """gunicorn with ``args`` on a free loopback port, on the test database, its environment the test's with
    ``env`` over it; yields its base URL once it answers /livez."""
    port = free_port()
    web = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "config.wsgi", "-b", f"127.0.0.1:{port}", *args],
        cwd=settings.BASE_DIR,
        env={
            **os.environ,
            "DATABASE_URL": tests_database_url(),
            "ALLOWED_HOSTS": "127.0.0.1",
            "SITE_URL": f"http://127.0.0.1:{port}",
            **env,
        },
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(base, web)
        yield base
    finally:
        web.terminate()
        web.wait(timeout=30)


def _wait_healthy(base: str, web: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and web.poll() is None:
        try:
            if requests.get(f"{base}/livez", timeout=5).ok:
                return
        except requests.RequestException:
            pass
        time.sleep(0.3)
    raise AssertionError(f"gunicorn did not become healthy (exit code {web.poll()})")

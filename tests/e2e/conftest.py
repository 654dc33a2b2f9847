"""Real services for end-to-end tests: a Celery worker process on the test database and queue."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import pytest
from django.conf import settings
from django_scopes import scopes_disabled

from config.celery import app
from sessions_app.models import Session, Status
from tests.e2e.web_server import tests_database_url


def _wait_until_ready(process: subprocess.Popen, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("the Celery worker exited during start-up")
        if app.control.ping(timeout=0.5):
            return
    raise RuntimeError("the Celery worker did not answer a ping in time")


@pytest.fixture
def start_worker(transactional_db: None) -> Iterator[Callable[[], subprocess.Popen]]:
    """``start_worker()`` launches ``celery -A config worker`` on this run's queue; stopped at teardown."""
    started: list[subprocess.Popen] = []

    def start(*worker_args: str, **extra_env: str) -> subprocess.Popen:
        env = {**os.environ, "DATABASE_URL": tests_database_url(), **extra_env}
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--pool",
                "solo",
                "--loglevel",
                "WARNING",
                "-Q",
                settings.CELERY_TASK_DEFAULT_QUEUE,
                "--hostname",
                f"e2e-{os.getpid()}-{len(started)}@%h",
                *worker_args,  # e.g. "--pool", "prefork", "--concurrency", "2"
            ],
            env=env,
            cwd=settings.BASE_DIR,
        )
        started.append(process)
        _wait_until_ready(process)
        return process

    yield start
    # Every worker told first, then waited for: their warm shutdowns (seconds each) run side by side.
    running = [process for process in started if process.poll() is None]
    for process in running:
        process.terminate()
    for process in running:
        process.wait(timeout=30)


def wait_for_status(session_id: str, seconds: float = 60) -> Session:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with scopes_disabled():
            session = Session.objects.get(pk=session_id)
        if session.status != Status.PROCESSING:
            return session
        time.sleep(0.2)
    raise AssertionError(f"session {session_id} still processing after {seconds}s")

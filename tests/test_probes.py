"""Orchestrator probes (docs/deployment.md "Kubernetes"): ``/livez`` depends on nothing, so a Redis,
database or bucket outage never restarts the pods; ``/readyz`` names the dependency that is down."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.db import connection

from tests.e2e.tcp_proxy import OutageProxy, database_target

STORAGE_DOWN = {
    "BACKEND": "storages.backends.s3.S3Storage",
    "OPTIONS": {"bucket_name": "x", "endpoint_url": "http://127.0.0.1:9", "access_key": "a", "secret_key": "b"},
}


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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
    settings.STORAGES = {**settings.STORAGES, "blobs": STORAGE_DOWN}


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


def test_a_redis_blip_fails_readiness_but_not_liveness(db, client, redis_down) -> None:
    assert client.get("/livez").status_code == 200
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"] == {"database": "ok", "redis": "down", "storage": "ok"}


def test_an_unreachable_bucket_fails_readiness_but_not_liveness(db, client, storage_down) -> None:
    assert client.get("/livez").status_code == 200
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["storage"] == "down"


def test_readyz_is_200_when_everything_answers(db, client) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "redis": "ok", "storage": "ok"}}


def test_probes_need_no_login_and_no_https_redirect(db, client, settings) -> None:
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/livez").status_code == 200
    assert client.get("/readyz").status_code == 200

"""Pytest plugin (loaded with ``-p tests.services``, before Django reads its settings).

Makes the environment the settings need: the machine's PostgreSQL/Redis when DATABASE_URL /
REDIS_URL are set, embedded ones otherwise (``config.localstack``); and an S3 endpoint over
HTTP from moto's server, with a private bucket, for the whole test session.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid

import pytest

S3_BUCKET = "sessionledger-test"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_moto() -> str:
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per S3 request otherwise
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    return f"http://127.0.0.1:{port}"


def create_bucket(endpoint: str) -> None:
    import boto3

    client = boto3.client(
        "s3", endpoint_url=endpoint, aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1"
    )
    client.create_bucket(Bucket=S3_BUCKET)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    from config.localstack import ensure_environment

    ensure_environment()
    endpoint = start_moto()
    os.environ.update(
        S3_ENDPOINT_URL=endpoint,
        S3_BUCKET=S3_BUCKET,
        S3_ACCESS_KEY_ID="test",
        S3_SECRET_ACCESS_KEY="test",
        S3_REGION="us-east-1",
        SITE_URL="http://testserver",
        # A queue of our own, so a worker of another test run on the same Redis never takes our tasks.
        SESSIONLEDGER_QUEUE=f"tests-{uuid.uuid4().hex[:8]}",
        # Nothing consumes that queue (tests process in-process), so its length says nothing about a backlog:
        # backpressure is off unless a test turns it on (tests/client/test_backpressure.py).
        SESSIONLEDGER_MAX_QUEUE_DEPTH="0",
        SESSIONLEDGER_MAX_PROJECT_QUEUE_DEPTH="0",
        # Rate-limit counters are keyed by token id, which repeats across test databases and runs.
        SESSIONLEDGER_CACHE_PREFIX=f"tests-{uuid.uuid4().hex[:8]}",
        SESSIONLEDGER_DATA_DIR=os.environ.get("SESSIONLEDGER_DATA_DIR", str(early_config.rootpath / ".data")),
    )
    create_bucket(endpoint)

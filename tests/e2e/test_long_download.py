"""A download that outlasts gunicorn's worker timeout arrives whole.

A project's export streams one zip through one web worker for as long as the bucket takes. gunicorn
kills a worker that stays silent for ``--timeout`` seconds; its threaded workers (``config/gunicorn.py``)
keep speaking while a thread streams. Here the bucket answers through a slow link, so the download takes
several times the timeout; the zip must still hold every session.
"""

from __future__ import annotations

import gzip
import io
import os
import zipfile
from urllib.parse import urlsplit

import pytest
import requests

from tests.conftest import conversation
from tests.e2e.tcp_proxy import OutageProxy
from tests.e2e.web_server import gunicorn
from tests.factories import make_token

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
TIMEOUT = 2  # gunicorn's --timeout, seconds
DELAY = 1.25  # each chunk of the bucket's answers, seconds late: four blobs take 5 s, over twice the timeout


def test_an_export_that_outlasts_the_worker_timeout_arrives_whole(world, ingest) -> None:
    prompts = {f"prompt {n}": ingest(world.project, world.member, f"prompt {n}", seed=f"x{n}") for n in range(4)}
    bucket = urlsplit(os.environ["S3_ENDPOINT_URL"])
    slow_link = OutageProxy((bucket.hostname or "127.0.0.1", bucket.port or 80), delay=DELAY)
    token = make_token(world.admin)
    with gunicorn(
        "--config",
        "python:config.gunicorn",
        "--timeout",
        str(TIMEOUT),
        S3_ENDPOINT_URL=f"http://127.0.0.1:{slow_link.port}",
    ) as base:
        response = requests.get(
            f"{base}/api/v1/projects/{world.project.slug}/export",
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
        )
    assert response.status_code == 200, response.content[:300]
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    assert archive.testzip() is None
    for prompt, session in prompts.items():
        assert gzip.decompress(archive.read(f"sessions/{session.pk}/raw.jsonl.gz")) == conversation(prompt)

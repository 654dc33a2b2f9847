"""schemathesis against /api/v1/schema on a live server: generated requests never cause a server
error and every response matches the documented schema (status code, content type, body)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.cache import cache
from rest_framework.throttling import SimpleRateThrottle

from projects.models import Role
from tests.factories import ProjectFactory, make_member, make_token

CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"
MAX_EXAMPLES = 25  # per operation, on top of the examples and coverage phases


@pytest.fixture
def own_rate_limit() -> Iterator[None]:
    """A limit of its own, high enough that the fuzzer sees the API rather than 429s.

    DRF reads the rates once, into ``SimpleRateThrottle.THROTTLE_RATES``; overriding the setting
    alone changes nothing (at 600 queries a minute most generated requests were answered 429).
    """
    original = SimpleRateThrottle.THROTTLE_RATES
    SimpleRateThrottle.THROTTLE_RATES = {scope: "1000000/min" for scope in {*original, "ingest", "query"}}
    cache.clear()
    yield
    SimpleRateThrottle.THROTTLE_RATES = original
    cache.clear()


@pytest.mark.django_db(transaction=True)
def test_the_api_honours_its_own_schema(live_server, tmp_path: Path, ingest, own_rate_limit) -> None:
    project = ProjectFactory(slug="fuzz")
    admin = make_member(project, Role.ADMIN)
    secret = make_token(admin)
    session = ingest(project, admin, "a real session, so detail endpoints answer 200 too")
    config = tmp_path / "schemathesis.toml"
    config.write_text(
        f'[parameters]\n"path.project" = "fuzz"\n"path.session_id" = "{session.pk}"\n'
        f'"path.agent_session_id" = "{session.agent_session_id}"\n'
    )
    cli = shutil.which("schemathesis", path=str(Path(sys.executable).parent)) or "schemathesis"
    run = subprocess.run(
        [
            cli,
            "--config-file",
            str(config),
            "run",
            f"{live_server.url}/api/v1/schema?format=json",
            "--checks",
            CHECKS,
            "--header",
            f"Authorization: Bearer {secret}",
            # Deterministic: the same cases on every run (seeded, no example database carried over),
            # the coverage phase's boundary values, and NUL allowed in every generated string.
            "--seed",
            "1",
            "--generation-database",
            "none",
            "--generation-allow-x00",
            "true",
            "--max-examples",
            str(MAX_EXAMPLES),
            "--phases",
            "examples,coverage,fuzzing",
            "--workers",
            "1",
            "--no-color",
            "--report-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    failures = run.stdout[run.stdout.find("FAILURES") :] if "FAILURES" in run.stdout else run.stdout[-8000:]
    assert run.returncode == 0, failures[:20000] + run.stderr[-2000:]

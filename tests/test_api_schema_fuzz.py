"""schemathesis against /api/v1/schema on a live server: generated requests never cause a server
error and every response matches the documented schema (status code, content type, body)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from projects.models import Role
from tests.factories import ProjectFactory, make_member, make_token

CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"


@pytest.mark.django_db(transaction=True)
def test_the_api_honours_its_own_schema(live_server, settings, tmp_path: Path, ingest) -> None:
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"ingest": "100000/min", "query": "100000/min"},
    }
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
            "--max-examples",
            "6",
            "--header",
            f"Authorization: Bearer {secret}",
            "--seed",
            "1",
            "--no-color",
            "--phases",
            "examples,fuzzing",
            "--report-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    failures = run.stdout[run.stdout.find("FAILURES") :] if "FAILURES" in run.stdout else run.stdout[-8000:]
    assert run.returncode == 0, failures[:20000] + run.stderr[-2000:]

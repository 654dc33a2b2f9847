"""The API against its own schema: generated requests never cause a server error and every response
matches the documented schema (status code, content type, body).

Two runs: schemathesis on a live server (seeded, so every run sends the same cases), and a
deterministic sweep that sends a list of known-hostile values (NUL, a superscript digit, 5,000
digits, invalid UTF-8, …) in every documented path and query parameter of every GET operation —
random generation found the NUL class only on some seeds."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote
from urllib.request import urlopen

import pytest
from django.conf import settings as django_settings
from rest_framework.throttling import SimpleRateThrottle

from projects.models import Role
from tests import caching
from tests.factories import ProjectFactory, make_member, make_token

CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"
MAX_EXAMPLES = 25  # per operation, on top of the examples and coverage phases
HIGH = "1000000/min"


@pytest.fixture
def own_rate_limit(settings) -> Iterator[None]:
    """A limit of its own, high enough that the fuzzer sees the API rather than 429s.

    DRF reads the rates once, into ``SimpleRateThrottle.THROTTLE_RATES``; overriding the setting
    alone changes nothing (at 600 queries a minute most generated requests were answered 429).
    The budgets of sensitive actions (``SESSIONLEDGER_*_RATE``) are read at each attempt.
    """
    original = SimpleRateThrottle.THROTTLE_RATES
    SimpleRateThrottle.THROTTLE_RATES = {scope: HIGH for scope in {*original, "ingest", "query"}}
    for name in dir(django_settings):
        if name.startswith("SESSIONLEDGER_") and name.endswith("_RATE"):
            setattr(settings, name, HIGH)
    caching.clear()
    yield
    SimpleRateThrottle.THROTTLE_RATES = original
    caching.clear()


@pytest.mark.django_db(transaction=True)
# Every operation of the schema, fuzzed: the one test allowed past the suite's 300 s on a loaded machine.
@pytest.mark.timeout(900)
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
    # Two processes, each with one worker, over two halves of the operations: the live server is
    # threaded, so both cores stay busy. Not one process with two worker threads: on Python 3.11 those
    # race in the ast module (hypothesis describes strategies with it), and the run dies with
    # "SystemError: AST constructor recursion depth mismatch" on some runs.
    # Halves of about equal time: the sessions' operations alone took a third of the run and the other
    # process then ran on alone; with the tokens, the device login and the audit logs each takes half.
    # The rest leaves out /projects/{project}: its DELETE would delete the project both halves work in.
    first = "/sessions|/tokens|/auth/|/audit"
    halves = {
        "sessions": ["--include-path-regex", first],
        "rest": ["--exclude-path-regex", first + r"|/projects/\{project\}$"],
    }
    # The schema once before both ask for it at the same moment: drf-spectacular resolves its optional
    # extensions lazily on the first generation, which is not safe in two threads at once.
    with urlopen(f"{live_server.url}/api/v1/schema?format=json") as response:
        assert response.status == 200
    runs = {
        name: subprocess.Popen(
            [
                cli,
                "--config-file",
                str(config),
                "run",
                f"{live_server.url}/api/v1/schema?format=json",
                *operations,
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
                "--report",
                "ndjson",
                "--report-dir",
                str(tmp_path / name),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, operations in halves.items()
    }
    statuses: list[int] = []
    for name, run in runs.items():
        stdout, stderr = run.communicate(timeout=900)
        failures = stdout[stdout.find("FAILURES") :] if "FAILURES" in stdout else stdout[-8000:]
        assert run.returncode == 0, f"{name}: " + failures[:20000] + stderr[-2000:]
        statuses += _statuses(next((tmp_path / name).glob("*.ndjson")))
    assert len(statuses) > 500 and 429 not in statuses, "the fuzzer must see the API, not the rate limit"


def _statuses(report: Path) -> list[int]:
    """Status codes of every response recorded in schemathesis's NDJSON report."""
    found: list[int] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            response = node.get("response")
            if isinstance(node.get("request"), dict) and isinstance(response, dict) and "status_code" in response:
                found.append(response["status_code"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for line in report.read_text().splitlines():
        walk(json.loads(line))
    return found


HOSTILE = ["\x00", "a\x00b", "²", "9" * 5000, "-" * 5000 + "x", "-" * 40 + "x", "line\nbreak", b"\xc3\x28", "x" * 5000]


@pytest.mark.django_db
def test_every_documented_parameter_survives_hostile_values(api_as, ingest, settings, own_rate_limit) -> None:
    settings.DEBUG = False
    project = ProjectFactory(slug="fuzz")
    admin = make_member(project, Role.ADMIN)
    session = ingest(project, admin, "a real session, so detail endpoints reach their lookups")
    client = api_as(admin)
    client.raise_request_exception = False
    defaults = {"project": "fuzz", "session_id": str(session.pk), "agent_session_id": session.agent_session_id}
    schema = client.get("/api/v1/schema?format=json").json()
    tried = 0
    for path, operations in schema["paths"].items():
        parameters = operations.get("get", {}).get("parameters", [])
        for parameter in (p for p in parameters if p["in"] in ("path", "query")):
            for value in HOSTILE:
                url = _url(path, parameters, defaults, parameter["name"], value)
                response = client.get(url)
                tried += 1
                assert response.status_code < 500, (url[:300], response.status_code)
                if response.status_code >= 400:
                    assert response.json()["error"]["code"], url[:300]
    assert tried > 200


def _url(path: str, parameters: list[dict], defaults: dict[str, str], name: str, value: str | bytes) -> str:
    """``path`` with its path parameters filled in (``value`` for ``name``), plus ``name=value`` if a query one."""
    for parameter in (p for p in parameters if p["in"] == "path"):
        given = value if parameter["name"] == name else defaults.get(parameter["name"], "1")
        path = path.replace("{" + parameter["name"] + "}", quote(given, safe=""))
    query = any(p["name"] == name and p["in"] == "query" for p in parameters)
    return f"{path}?{quote(name, safe='')}={quote(value, safe='')}" if query else path

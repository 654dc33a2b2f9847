"""`pip install .` alone gives a server that runs: the wheel declares the client package it imports
and carries its templates, static files and migrations (docs/deployment.md, "Without Docker").

The wheels are built offline (no build isolation: hatchling comes with the dev extras) and
installed into a folder of their own, which is put first on the path of a fresh interpreter.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(settings.BASE_DIR)


def _pip(*args: str, cwd: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PIP_NO_INDEX": "1"},  # nothing may come from the network
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("wheels")
    _pip(
        "wheel", "--no-deps", "--no-build-isolation", "--wheel-dir", str(out), str(ROOT), str(ROOT / "client"), cwd=out
    )
    found = {path.name.split("-")[0]: path for path in out.glob("*.whl")}
    assert set(found) == {"sessionledger", "sessionledger_server"}, found
    return found


def test_the_server_wheel_declares_the_client_it_imports(wheels: dict[str, Path]) -> None:
    with zipfile.ZipFile(wheels["sessionledger_server"]) as wheel:
        metadata_name = next(name for name in wheel.namelist() if name.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(wheel.read(metadata_name).decode())
    requirements = metadata.get_all("Requires-Dist") or []
    assert f"sessionledger @ {(ROOT / 'client').as_uri()}" in requirements, requirements


def test_the_server_wheel_carries_templates_static_files_and_migrations(wheels: dict[str, Path]) -> None:
    with zipfile.ZipFile(wheels["sessionledger_server"]) as wheel:
        names = set(wheel.namelist())
    for needed in (
        "frontend/templates/frontend/base.html",
        "frontend/static/frontend/app.css",
        "frontend/static/frontend/app.js",
        "sessions_app/migrations/0001_initial.py",
        "projects/migrations/0001_initial.py",
        "config/__main__.py",
    ):
        assert needed in names, needed


def test_the_installed_wheels_run_the_server_commands(wheels: dict[str, Path], tmp_path: Path) -> None:
    """From the installed files alone (not this checkout): the system check passes, the static files
    are collected, and the client package the worker imports is the installed one."""
    target = tmp_path / "site"
    _pip("install", "--no-deps", "--target", str(target), *map(str, wheels.values()), cwd=tmp_path)
    env = {**os.environ, "PYTHONPATH": str(target), "SESSIONLEDGER_DATA_DIR": str(tmp_path / "data")}

    def run(*args: str) -> str:
        result = subprocess.run(
            [sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    where = run(
        "-c", "import config, sessionledger.core.formats; print(config.__file__); print(sessionledger.__file__)"
    )
    assert all(line.startswith(str(target)) for line in where.split()), where
    run("-m", "config", "check")
    run("-m", "config", "collectstatic", "--no-input", "--verbosity", "0")
    assert (tmp_path / "data/static/frontend/app.css").is_file()


def test_server_client_and_api_document_carry_the_one_version(wheels: dict[str, Path], client) -> None:
    from sessionledger.core.version import __version__

    for name in ("sessionledger_server", "sessionledger"):
        with zipfile.ZipFile(wheels[name]) as archive:
            [metadata] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
            assert Parser().parsestr(archive.read(metadata).decode())["Version"] == __version__, name
    assert client.get("/api/v1/schema", {"format": "json"}).json()["info"]["version"] == __version__

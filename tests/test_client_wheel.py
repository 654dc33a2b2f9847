"""The server serves its own client (docs/client.md "Install"): the wheel installs into a fresh virtual
environment from the server's URL, the pages show the `pipx install` line, every answer names the
server's version, and the client warns when its own differs."""

from __future__ import annotations

import http.server
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from sessionledger import api
from sessionledger.core.version import __version__

ROOT = Path(__file__).resolve().parents[1]
WHEEL = f"sessionledger-{__version__}-py3-none-any.whl"


@pytest.fixture(scope="module")
def client_dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The client's wheel, built as the image and `make install` build it (offline)."""
    out = tmp_path_factory.mktemp("client-dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         "--wheel-dir", str(out), str(ROOT / "client")],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    assert (out / WHEEL).is_file()
    return out


@pytest.fixture
def served(settings, client_dist: Path) -> Path:
    settings.CLIENT_DIST_DIR = client_dist
    return client_dist


def test_the_client_installs_into_a_fresh_venv_from_the_servers_url(live_server, served, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    # Without a pip of its own (ensurepip took 11 s of a loaded box): this pip installs into it, as pipx's does.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    url = f"{live_server.url}/client/{WHEEL}"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--no-index",
         "--disable-pip-version-check", url],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert install.returncode == 0, install.stdout + install.stderr
    version = subprocess.run([str(venv / "bin" / "sessionledger"), "--version"], capture_output=True, text=True)
    assert version.stdout.strip() == f"sessionledger {__version__}"


def test_another_file_name_under_client_is_a_404(db, client, served) -> None:
    assert client.get(f"/client/{WHEEL}").status_code == 200
    assert client.get("/client/sessionledger-0.0.1-py3-none-any.whl").status_code == 404
    assert client.get("/client/..%2Fsettings.py").status_code == 404


def test_every_answer_names_the_servers_version(db, client, world, api_as) -> None:
    assert client.get("/livez")["X-Sessionledger-Version"] == __version__
    assert api_as(world.viewer).get("/api/v1/projects")["X-Sessionledger-Version"] == __version__


def test_device_login_and_settings_pages_show_the_pipx_line(client, world, settings) -> None:
    line = f"pipx install {settings.SITE_URL}/client/{WHEEL}"
    client.force_login(world.admin)
    assert line in client.get("/device").content.decode()
    assert line in client.get(f"/p/{world.project.slug}/settings/").content.decode()


@pytest.fixture
def newer_server() -> Iterator[str]:
    """A server that answers as version 9.9.9 (the client side is what is under test)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("X-Sessionledger-Version", "9.9.9")
            self.end_headers()
            self.wfile.write(b"[]")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def test_the_client_warns_once_when_the_servers_version_differs(newer_server: str, capsys) -> None:
    client = api.Client(newer_server, "token")
    client.get("/projects")
    client.get("/projects")
    warning = capsys.readouterr().err
    assert warning.count(f"this client is {__version__}, the server runs 9.9.9") == 1
    assert f"pipx install --force {newer_server}/client/sessionledger-9.9.9-py3-none-any.whl" in warning


def test_the_client_is_silent_when_versions_agree(live_server, capsys) -> None:
    with pytest.raises(api.ApiError):  # no token: 401, but the answer still carries the version
        api.Client(live_server.url).get("/projects")
    assert "the server runs" not in capsys.readouterr().err


def test_the_without_docker_path_builds_the_wheel_where_the_server_serves_it(settings) -> None:
    """docs/deployment.md "Without Docker" once installed no wheel, and the pages' pipx line was a 404."""
    doc = (ROOT / "docs" / "deployment.md").read_text()
    section = doc.split("## Without Docker", 1)[1].split("\n## ", 1)[0]
    assert "export SESSIONLEDGER_DATA_DIR=" in section
    assert 'pip wheel --no-deps --wheel-dir "$SESSIONLEDGER_DATA_DIR/client-dist" ./client' in section
    assert settings.CLIENT_DIST_DIR == settings.DATA_DIR / "client-dist"

"""The deployment contract: docker-compose.yml, the Dockerfile and .env.example agree with the settings."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from config import variables

BASE_DIR = Path(__file__).resolve().parent.parent
APP_SERVICES = ("web", "worker", "beat", "migrate")
SPEC_VARIABLES = {  # docs/design.md §8: what operators and scripts rely on
    "DATABASE_URL",
    "REDIS_URL",
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "SITE_URL",
    "S3_ENDPOINT_URL",
    "S3_BUCKET",
    "S3_ACCESS_KEY_ID",
    "S3_SECRET_ACCESS_KEY",
    "S3_REGION",
}
COMPOSE_ONLY_VARIABLES = {"POSTGRES_PASSWORD"}  # interpolated by docker compose, never read by Django
REQUIRED_SECRETS = {"SECRET_KEY": "k" * 50, "POSTGRES_PASSWORD": "pg-password", "S3_SECRET_ACCESS_KEY": "minio-pass"}


def settings_variables() -> set[str]:
    """Every name the settings read: the schema of config/variables.py (each also accepts NAME_FILE)."""
    return set(variables.NAMES)


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((BASE_DIR / "docker-compose.yml").read_text())


def _environment(service: dict) -> dict[str, str]:
    environment = service.get("environment") or {}
    if isinstance(environment, list):
        environment = dict(item.split("=", 1) if "=" in item else (item, "") for item in environment)
    return {name: str(value) for name, value in environment.items()}


def _command(service: dict) -> str:
    command = service.get("command", "")
    return " ".join(command) if isinstance(command, list) else command


def test_the_settings_read_the_variables_the_spec_promises() -> None:
    assert settings_variables() >= SPEC_VARIABLES | {"DEBUG", "SESSIONLEDGER_MAX_RAW_BYTES"}


def test_compose_has_web_worker_beat_migrate_postgres_redis_and_s3(compose: dict) -> None:
    assert set(compose["services"]) >= {*APP_SERVICES, "postgres", "redis", "s3", "createbucket"}


def test_the_processes_are_gunicorn_and_celery_worker_and_beat(compose: dict) -> None:
    services = compose["services"]
    assert _command(services["web"]).startswith("gunicorn config.wsgi --bind 0.0.0.0:8000")
    assert "8000:8000" in services["web"]["ports"]
    assert _command(services["worker"]).startswith("celery -A config worker")
    assert _command(services["beat"]).startswith("celery -A config beat")
    assert _command(services["migrate"]) == "python manage.py migrate --no-input"


def test_the_app_starts_only_after_migrations_and_the_bucket(compose: dict) -> None:
    services = compose["services"]
    for name in ("web", "worker", "beat"):
        depends = services[name]["depends_on"]
        assert depends["migrate"]["condition"] == "service_completed_successfully", name
        assert depends["createbucket"]["condition"] == "service_completed_successfully", name
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert services["createbucket"]["depends_on"] == {"s3": {"condition": "service_healthy"}}


def test_every_app_service_is_built_from_this_repository(compose: dict) -> None:
    for name in APP_SERVICES:
        assert compose["services"][name]["build"] == ".", name


PINNED = re.compile(r"^(?P<name>[a-z0-9./-]+):(?P<tag>[\w.-]+)@sha256:[0-9a-f]{64}$")


def test_every_image_not_built_here_is_pinned_by_version_and_digest(compose: dict) -> None:
    for name, service in compose["services"].items():
        if "build" in service:
            continue
        image = service["image"]
        match = PINNED.match(image)
        assert match, f"{name}: {image} is not name:version@sha256:digest"
        assert match["tag"] != "latest" and any(c.isdigit() for c in match["tag"]), f"{name}: {image} has no version"


def test_postgres_16_redis_7_and_a_maintained_s3_server(compose: dict) -> None:
    services = compose["services"]
    assert PINNED.match(services["postgres"]["image"])["tag"].startswith("16.")
    assert PINNED.match(services["redis"]["image"])["tag"].startswith("7.")
    assert PINNED.match(services["s3"]["image"])["name"] == "versity/versitygw"
    assert not [name for name, service in services.items() if "minio" in str(service.get("image", ""))]


def test_the_bucket_is_created_through_the_s3_api_by_the_app_image(compose: dict) -> None:
    createbucket = compose["services"]["createbucket"]
    assert createbucket["build"] == "."
    script = _command(createbucket)
    assert "create_bucket(Bucket=bucket)" in script and "put_bucket_policy" not in script


@pytest.mark.parametrize("name", ["web", "worker", "postgres", "redis", "s3"])
def test_long_running_services_have_healthchecks(compose: dict, name: str) -> None:
    assert compose["services"][name]["healthcheck"]["test"]


def test_the_web_healthcheck_probes_healthz(compose: dict) -> None:
    assert "/healthz" in " ".join(compose["services"]["web"]["healthcheck"]["test"])


def test_state_lives_in_named_volumes(compose: dict) -> None:
    for name, path in (("postgres", "/var/lib/postgresql/data"), ("redis", "/data"), ("s3", "/data")):
        [mount] = compose["services"][name]["volumes"]
        volume, target = mount.split(":")
        assert target == path and volume in compose["volumes"], name


@pytest.mark.parametrize("name", APP_SERVICES)
def test_every_variable_an_app_service_sets_is_one_the_settings_read(compose: dict, name: str) -> None:
    known = settings_variables()
    unknown = {var for var in _environment(compose["services"][name]) if var.removesuffix("_FILE") not in known}
    assert not unknown, f"{name} sets variables config/settings.py never reads: {sorted(unknown)}"


@pytest.mark.parametrize("name", APP_SERVICES)
def test_every_app_service_runs_in_production_with_the_spec_variables(compose: dict, name: str) -> None:
    environment = _environment(compose["services"][name])
    assert environment["SESSIONLEDGER_ENV"] == "production"
    assert environment["DEBUG"] == "false"
    assert set(environment) >= SPEC_VARIABLES
    assert environment["SECRET_KEY"].startswith("${SECRET_KEY:?"), "no default secret may ship"


def test_env_example_lists_every_setting_and_nothing_else() -> None:
    text = (BASE_DIR / ".env.example").read_text()
    listed = set(re.findall(r"^#? ?([A-Z][A-Z0-9_]*)=", text, flags=re.MULTILINE))
    assert settings_variables() - listed == set(), "missing from .env.example"
    assert listed - settings_variables() - COMPOSE_ONLY_VARIABLES == set(), "not read by the settings"


def test_readme_configuration_table_lists_every_setting() -> None:
    readme = (BASE_DIR / "README.md").read_text()
    rows = set(re.findall(r"^\| `([A-Z][A-Z0-9_]*)` \|", readme, flags=re.MULTILINE))
    assert settings_variables() - rows == set(), "missing from README's configuration table"
    assert rows - settings_variables() == set(), "README documents variables the settings do not read"


def test_the_image_is_python_311_slim_runs_as_non_root_and_collects_static_files() -> None:
    dockerfile = (BASE_DIR / "Dockerfile").read_text()
    [base] = re.findall(r"^FROM (\S+)", dockerfile, flags=re.MULTILINE)
    match = PINNED.match(base)
    assert match and match["name"] == "python", base  # two builds a month apart start from the same bytes
    assert re.fullmatch(r"3\.11\.\d+-slim-\w+", match["tag"]), base
    assert "COPY client/ client/" in dockerfile  # the server's declared dependency, installed by `pip install .`
    assert "RUN pip install --require-hashes --no-deps -r requirements.lock" in dockerfile
    assert re.search(r"^RUN pip install --no-deps \./client \.(\s|$)", dockerfile, flags=re.MULTILINE)
    users = re.findall(r"^USER (\S+)", dockerfile, flags=re.MULTILINE)
    assert users and re.fullmatch(r"[1-9]\d*(:\d+)?", users[-1])  # numeric: Kubernetes checks runAsNonRoot by it
    assert "manage.py collectstatic --no-input" in dockerfile


def test_the_image_starts_gunicorn_with_its_config_by_default() -> None:
    dockerfile = (BASE_DIR / "Dockerfile").read_text()
    [command] = re.findall(r"^CMD (\[.*?\])\s*$", dockerfile, flags=re.MULTILINE | re.DOTALL)
    argv = json.loads(command.replace("\\\n", ""))
    assert argv[:2] == ["gunicorn", "config.wsgi"]
    assert argv[argv.index("--config") + 1] == "python:config.gunicorn"  # threaded workers, checked config


def test_the_docker_context_leaves_out_local_state_and_secrets() -> None:
    ignored = set((BASE_DIR / ".dockerignore").read_text().split())
    assert {".git", ".venv", ".data", ".env"} <= ignored


def _compose_command() -> list[str] | None:
    """``docker compose`` (the plugin), else a standalone ``docker-compose`` of version 2."""
    candidates = [["docker", "compose"]] if shutil.which("docker") else []
    if shutil.which("docker-compose"):
        candidates.append(["docker-compose"])
    for command in candidates:
        probe = subprocess.run([*command, "version"], capture_output=True, text=True, timeout=30)
        if probe.returncode == 0 and re.search(r"v?2\.\d+", probe.stdout):
            return command
    return None


def test_docker_compose_accepts_the_file_with_the_example_environment() -> None:
    command = _compose_command()
    if command is None:
        pytest.skip("docker compose (v2) is not installed")
    environ = {**os.environ, **REQUIRED_SECRETS}
    result = subprocess.run(
        [*command, "--env-file", ".env.example", "config", "-q"],
        cwd=BASE_DIR,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr


def test_docker_compose_refuses_to_start_without_the_secrets() -> None:
    command = _compose_command()
    if command is None:
        pytest.skip("docker compose (v2) is not installed")
    environ = {k: v for k, v in os.environ.items() if k not in REQUIRED_SECRETS}
    result = subprocess.run(
        [*command, "--env-file", ".env.example", "config", "-q"],
        cwd=BASE_DIR,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert re.search(r"set (SECRET_KEY|POSTGRES_PASSWORD|S3_SECRET_ACCESS_KEY) in \.env", result.stderr), result.stderr


def test_the_createbucket_command_makes_a_private_bucket_and_can_run_again(compose: dict) -> None:
    """The one-shot's own command, run twice against the test S3 server (moto)."""
    import boto3
    import botocore

    command = compose["services"]["createbucket"]["command"]
    bucket = f"compose-{os.getpid()}"
    environ = {**os.environ, "S3_BUCKET": bucket}
    for _ in range(2):
        result = subprocess.run(command, env=environ, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == f"bucket {bucket} ready"
    client = boto3.client(
        "s3",
        endpoint_url=os.environ["S3_ENDPOINT_URL"],
        aws_access_key_id=os.environ["S3_ACCESS_KEY_ID"],
        aws_secret_access_key=os.environ["S3_SECRET_ACCESS_KEY"],
        region_name=os.environ["S3_REGION"],
    )
    client.head_bucket(Bucket=bucket)
    with pytest.raises(botocore.exceptions.ClientError):
        client.get_bucket_policy(Bucket=bucket)  # no policy: nothing is granted to anonymous readers


def _names(specs: list[str]) -> set[str]:
    return {re.split(r"[\s<>=!~;\[@]", spec, maxsplit=1)[0].lower().replace("_", "-") for spec in specs}


def _pins(lock: str) -> list[tuple[str, str]]:
    """(name, version) of each entry of a lock (a universal lock may pin one name twice, under markers)."""
    return re.findall(r"^([a-z0-9][a-z0-9._-]*)==([^\s;]+)(?: ;[^\n]*)? \\$", lock, flags=re.MULTILINE)


def _every_entry_hashed(lock: str) -> bool:
    entries = re.split(r"\n(?=[a-z0-9])", lock)
    return all("--hash=sha256:" in entry for entry in entries if "==" in entry)


def test_the_lock_pins_every_server_dependency_with_hashes() -> None:
    """requirements.lock (what the image installs) holds each [project] dependency at one version, hashed."""
    import tomllib

    project = tomllib.loads((BASE_DIR / "pyproject.toml").read_text())["project"]
    wanted = _names(project["dependencies"]) - {"sessionledger"}  # the client: from client/ in the same build
    lock = (BASE_DIR / "requirements.lock").read_text()
    pinned = dict(_pins(lock))
    assert wanted - set(pinned) == set(), "missing from requirements.lock: regenerate it with `make lock`"
    assert _every_entry_hashed(lock)


def test_the_dev_lock_pins_every_dev_and_ci_tool_with_hashes_and_the_runtime_as_the_image_has_it() -> None:
    """`make install` and CI install requirements-dev.lock with --require-hashes: every tool of the dev
    extra is in it (else pip refuses the install), and the tests run the runtime's versions of the image."""
    import tomllib

    project = tomllib.loads((BASE_DIR / "pyproject.toml").read_text())["project"]
    wanted = _names(project["dependencies"] + project["optional-dependencies"]["dev"])
    wanted -= {"sessionledger", "sessionledger-server"}  # installed editable from this checkout
    dev_lock = (BASE_DIR / "requirements-dev.lock").read_text()
    assert wanted - {name for name, _ in _pins(dev_lock)} == set(), "regenerate requirements-dev.lock: `make lock`"
    assert _every_entry_hashed(dev_lock)
    runtime = dict(_pins((BASE_DIR / "requirements.lock").read_text()))
    differ = {(name, version) for name, version in _pins(dev_lock) if runtime.get(name, version) != version}
    assert differ == set()

"""Configuration from the environment (docs/design.md §8) and ``GET /healthz``."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from config import env, localstack, variables

BASE_DIR = Path(__file__).resolve().parent.parent
PRODUCTION_SECRET = "x" * 50


# --- the typed helper ----------------------------------------------------------------------------


@pytest.fixture
def clean_env(monkeypatch):
    for name in ("SL_TEST", "SL_TEST_FILE"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_an_integer_is_parsed(clean_env) -> None:
    clean_env.setenv("SL_TEST", "42")
    assert env.integer("SL_TEST") == 42


def test_a_bad_integer_is_a_config_error_naming_the_variable(clean_env) -> None:
    clean_env.setenv("SL_TEST", "10MB")
    with pytest.raises(env.ConfigError, match=r"^SL_TEST='10MB' is not valid"):
        env.integer("SL_TEST", 5)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", True),
        ("TRUE", True),
        ("yes", True),
        ("on", True),
        ("0", False),
        ("false", False),
        ("No", False),
        ("off", False),
        ("", False),
    ],
)
def test_booleans_accept_the_usual_spellings(clean_env, text: str, value: bool) -> None:
    clean_env.setenv("SL_TEST", text)
    assert env.boolean("SL_TEST") is value


def test_a_bad_boolean_is_a_config_error_naming_the_variable_and_the_choices(clean_env) -> None:
    clean_env.setenv("SL_TEST", "maybe")
    with pytest.raises(env.ConfigError, match=r"SL_TEST='maybe' is not valid: expected one of 1/0, true/false"):
        env.boolean("SL_TEST", False)


def test_csv_splits_and_drops_blanks(clean_env) -> None:
    clean_env.setenv("SL_TEST", " a.example, b.example ,,")
    assert env.csv("SL_TEST") == ["a.example", "b.example"]


def test_an_unset_variable_takes_its_default(clean_env) -> None:
    assert env.string("SL_TEST", "fallback") == "fallback"
    assert env.integer("SL_TEST", 7) == 7


def test_an_unset_required_variable_is_a_config_error(clean_env) -> None:
    with pytest.raises(env.ConfigError, match="SL_TEST must be set"):
        env.string("SL_TEST")


def test_name_file_is_read_and_stripped(clean_env, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("s3cret-from-a-file\n")
    clean_env.setenv("SL_TEST_FILE", str(secret))
    assert env.string("SL_TEST") == "s3cret-from-a-file"


def test_name_file_is_typed_like_the_variable(clean_env, tmp_path: Path) -> None:
    (tmp_path / "n").write_text("abc")
    clean_env.setenv("SL_TEST_FILE", str(tmp_path / "n"))
    with pytest.raises(env.ConfigError, match="SL_TEST='abc'"):
        env.integer("SL_TEST")


def test_the_variable_wins_over_name_file(clean_env, tmp_path: Path) -> None:
    (tmp_path / "v").write_text("from-file")
    clean_env.setenv("SL_TEST_FILE", str(tmp_path / "v"))
    clean_env.setenv("SL_TEST", "from-env")
    assert env.string("SL_TEST") == "from-env"


def test_an_unreadable_name_file_is_a_config_error_naming_it(clean_env, tmp_path: Path) -> None:
    clean_env.setenv("SL_TEST_FILE", str(tmp_path / "missing"))
    with pytest.raises(env.ConfigError, match=r"SL_TEST_FILE=.*missing.* cannot be read"):
        env.string("SL_TEST", "default")


# --- the settings module in production (a fresh interpreter each) --------------------------------


def _import_settings(**overrides: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECRET_KEY", "SECRET_KEY_FILE"}}
    environ.update({"SESSIONLEDGER_ENV": "production", "DJANGO_SETTINGS_MODULE": "config.settings", **overrides})
    code = "import django; django.setup(); from django.conf import settings; print('DEBUG', settings.DEBUG)"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=BASE_DIR, env=environ, capture_output=True, text=True, timeout=60
    )


def _refusal(result: subprocess.CompletedProcess) -> str:
    """The one line a refused configuration prints (nothing else: no traceback), without its prefix."""
    assert result.returncode != 0, result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    prefix = "sessionledger: configuration error: "
    assert lines[0].startswith(prefix), lines[0]
    return lines[0][len(prefix) :]


def test_production_starts_with_a_real_secret_and_debug_off() -> None:
    result = _import_settings(SECRET_KEY=PRODUCTION_SECRET)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "DEBUG False"


def test_production_refuses_debug() -> None:
    result = _import_settings(SECRET_KEY=PRODUCTION_SECRET, DEBUG="true")
    assert result.returncode != 0
    assert _refusal(result) == "DEBUG must be off when SESSIONLEDGER_ENV=production"


def test_production_refuses_the_default_secret_key() -> None:
    result = _import_settings()
    assert result.returncode != 0
    assert "SECRET_KEY (or SECRET_KEY_FILE) must be set to 32+ random characters" in _refusal(result)


def test_production_refuses_a_short_secret_key() -> None:
    result = _import_settings(SECRET_KEY="short")
    assert "SECRET_KEY (or SECRET_KEY_FILE) must be set" in _refusal(result)


def test_production_reads_the_secret_key_from_secret_key_file(tmp_path: Path) -> None:
    (tmp_path / "key").write_text(PRODUCTION_SECRET + "\n")
    result = _import_settings(SECRET_KEY_FILE=str(tmp_path / "key"))
    assert result.returncode == 0, result.stderr


def test_a_malformed_setting_stops_startup_naming_the_variable() -> None:
    result = _import_settings(SECRET_KEY=PRODUCTION_SECRET, SESSIONLEDGER_MAX_RAW_BYTES="10MB")
    assert _refusal(result).startswith("SESSIONLEDGER_MAX_RAW_BYTES='10MB' is not valid")


def test_an_unknown_environment_name_is_refused_instead_of_running_development_mode() -> None:
    result = _import_settings(SECRET_KEY=PRODUCTION_SECRET, SESSIONLEDGER_ENV="Production")
    assert _refusal(result) == "SESSIONLEDGER_ENV='Production' is not valid: expected one of development, production"


@pytest.mark.parametrize("rate", ["100/minute-ish", "10", "ten/min", "0/min", "²/min"])
def test_a_malformed_rate_stops_startup_instead_of_failing_every_request(rate: str) -> None:
    result = _import_settings(SECRET_KEY=PRODUCTION_SECRET, SESSIONLEDGER_QUERY_RATE=rate)
    assert _refusal(result).startswith(f"SESSIONLEDGER_QUERY_RATE={rate!r} is not valid: expected a count per period")


def test_a_non_postgresql_database_url_is_refused_naming_it_without_echoing_the_password() -> None:
    result = _import_settings(SECRET_KEY=PRODUCTION_SECRET, DATABASE_URL="mysql://app:hunter2-secret@db/app")
    line = _refusal(result)
    assert line.startswith("DATABASE_URL is not valid: expected postgres://")
    assert "hunter2" not in result.stderr


def test_a_redis_url_without_a_scheme_is_refused_naming_it() -> None:
    result = _import_settings(SECRET_KEY=PRODUCTION_SECRET, REDIS_URL="cache.internal:6379")
    assert _refusal(result).startswith("REDIS_URL is not valid: expected redis://, rediss:// or unix://")


def test_an_unknown_log_level_is_refused_naming_it() -> None:
    result = _import_settings(SECRET_KEY=PRODUCTION_SECRET, LOG_LEVEL="verbose")
    assert _refusal(result).startswith("LOG_LEVEL='verbose' is not valid: expected one of DEBUG, INFO")


def test_a_lowercase_log_level_is_accepted() -> None:
    result = _import_settings(SECRET_KEY=PRODUCTION_SECRET, LOG_LEVEL="warning")
    assert result.returncode == 0, result.stderr


def test_every_malformed_variable_is_named_in_the_one_line() -> None:
    result = _import_settings(SECRET_KEY=PRODUCTION_SECRET, LOG_LEVEL="loud", SESSIONLEDGER_INVITE_RATE="lots")
    line = _refusal(result)
    assert "SESSIONLEDGER_INVITE_RATE='lots'" in line and "LOG_LEVEL='loud'" in line


def test_manage_py_check_stops_with_the_same_line() -> None:
    environ = {**os.environ, "SESSIONLEDGER_ENV": "staging"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=BASE_DIR, env=environ, capture_output=True, text=True, timeout=60
    )
    assert _refusal(result).startswith("SESSIONLEDGER_ENV='staging' is not valid")


def test_settings_read_the_environment_only_through_the_schema() -> None:
    source = (BASE_DIR / "config" / "settings.py").read_text()
    assert "os.environ" not in source and "getenv" not in source and "from config import env" not in source
    assert set(re.findall(r'env\["([A-Z0-9_]+)"\]', source)) <= variables.NAMES


def test_make_run_port_moves_site_url_and_so_every_link(monkeypatch) -> None:
    for name in ("SITE_URL", "CSRF_TRUSTED_ORIGINS"):
        monkeypatch.setenv(name, "")  # recorded, so that what listen_port sets is undone after the test
        monkeypatch.delenv(name)
    monkeypatch.setenv("PORT", "8123")
    assert localstack.listen_port() == "8123"
    code = "import django; django.setup(); from django.conf import settings as s; "
    code += "print(s.SITE_URL, *s.CSRF_TRUSTED_ORIGINS)"
    environ = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    result = subprocess.run([sys.executable, "-c", code], cwd=BASE_DIR, env=environ, capture_output=True, text=True)
    assert result.stdout.split() == ["http://127.0.0.1:8123", "http://127.0.0.1:8123"], result.stderr


def test_an_explicit_site_url_wins_over_port(monkeypatch) -> None:
    monkeypatch.setenv("PORT", "8123")
    monkeypatch.setenv("SITE_URL", "https://ledger.example.com")
    localstack.listen_port()
    assert os.environ["SITE_URL"] == "https://ledger.example.com"


def test_a_malformed_port_is_refused_naming_it(monkeypatch) -> None:
    monkeypatch.setenv("PORT", "80a")
    with pytest.raises(SystemExit, match="PORT='80a' is not valid"):
        localstack.listen_port()


# --- /healthz -------------------------------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_healthz_needs_no_login_and_no_https_redirect(db, client, settings) -> None:
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/accounts/login/").status_code == 301
    assert client.get("/healthz").status_code == 200


def test_an_unknown_setting_is_named_at_start_up_with_the_one_it_nearly_is_and_the_client_s_are_left_alone() -> None:
    """A typo, or a setting no version reads, once passed silently, its default in force; the client's
    own variables share the environment."""
    environ = {**os.environ, "SESSIONLEDGER_MAX_QUEUE_DEPHT": "5", "SESSIONLEDGER_SERVER": "https://ledger.example"}
    environ |= {"SESSIONLEDGER_SCIM_TOKN_FILE": "/run/secrets/scim", "SESSIONLEDGER_UPLOAD_INLINE": "1"}
    environ |= {"SESSIONLEDGER_LEGACY_WEBHOOKS": "on", "SESSIONLEDGER_SECRET_KEY": "x" * 40}
    code = "import django; django.setup()"
    result = subprocess.run([sys.executable, "-c", code], cwd=BASE_DIR, env=environ, capture_output=True, text=True)

    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "configuration warning" in line]
    assert warnings == [
        "sessionledger: configuration warning: SESSIONLEDGER_LEGACY_WEBHOOKS is not a setting:"
        ' ignored (README.md "Configuration" lists them all)',
        "sessionledger: configuration warning: SESSIONLEDGER_MAX_QUEUE_DEPHT is not a setting:"
        " did you mean SESSIONLEDGER_MAX_QUEUE_DEPTH?",
        "sessionledger: configuration warning: SESSIONLEDGER_SCIM_TOKN_FILE is not a setting:"
        " did you mean SESSIONLEDGER_SCIM_TOKEN?",
        "sessionledger: configuration warning: SESSIONLEDGER_SECRET_KEY is not a setting: did you mean SECRET_KEY?",
    ]
    assert "x" * 40 not in result.stderr  # names only, never a value


def test_every_variable_the_client_reads_passes_the_server_s_start_up_without_a_warning() -> None:
    """A developer's shell holds the client's SESSIONLEDGER_<KEY> settings while `make run` starts."""
    from sessionledger import config as client_config
    from sessionledger import spawn
    from sessionledger.commands import hook

    client_names = {client_config.ENV_PREFIX + key.upper() for key in client_config.DEFAULTS}
    client_names |= {hook.PROBE_VARIABLE, spawn.INLINE_ENV}
    assert variables.unknown(dict.fromkeys(client_names, "1")) == []

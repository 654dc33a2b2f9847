"""Every environment variable the server reads, declared once (docs/deployment.md "Configuration").

``SCHEMA`` lists each variable with its parser and its default; ``load()`` reads them all (``NAME`` or
``NAME_FILE``, config/env.py), checks the rules that tie several together, and ``load_or_exit()`` turns
any error into one line on stderr naming the variables and a non-zero exit, before Django starts. A
default is a value, or a function of the values read before it (they are read in this order).

The README's configuration table and .env.example list exactly these names (tests/test_compose.py).
"""

from __future__ import annotations

import difflib
import os
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from config import env
from config.saml import saml_providers

BASE_DIR = Path(__file__).resolve().parent.parent
DEV_SECRET = "dev-only-insecure-secret-key-change-me"
ENVIRONMENTS = ("development", "production")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
# gunicorn stops (instead of restarting workers forever) when a worker exits with this code while booting.
EXIT_CODE = 3


@dataclass(frozen=True)
class Variable:
    name: str
    parse: Callable[[str], Any]
    default: Any  # a value, or a function of the values read so far

    def default_for(self, values: Mapping[str, Any]) -> Any:
        return self.default(values) if callable(self.default) else self.default


# --- parsers beyond config/env.py's: each raises ValueError saying what it expected -------------------


def choice(*choices: str, fold: Callable[[str], str] = str) -> Callable[[str], str]:
    def parse(value: str) -> str:
        if fold(value) not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}")
        return fold(value)

    return parse


def at_least(minimum: int) -> Callable[[str], int]:
    def parse(value: str) -> int:
        number = int(value)
        if number < minimum:
            raise ValueError(f"expected an integer of at least {minimum}")
        return number

    return parse


def http_url(value: str) -> str:
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("expected an http:// or https:// URL with a host")
    return value.strip().rstrip("/")


def optional_url(value: str) -> str:
    return http_url(value) if value.strip() else ""


def database_url(value: str) -> dict[str, Any]:
    """Django's DATABASES entry; only PostgreSQL (row-level security, docs/design.md §9)."""
    import dj_database_url

    try:
        config = dict(dj_database_url.parse(value))
    except Exception:  # the library raises several types for a malformed URL
        raise ValueError("expected postgres://user:password@host:port/name") from None
    if config.get("ENGINE") != "django.db.backends.postgresql" or not config.get("NAME"):
        raise ValueError("expected postgres://user:password@host:port/name")
    return config


def redis_url(value: str) -> str:
    import redis

    try:
        redis.ConnectionPool.from_url(value)  # parses only; connects on first use
    except ValueError:
        raise ValueError("expected redis://, rediss:// or unix:// (e.g. redis://host:6379/0)") from None
    return value


def sample_rate(value: str) -> float:
    rate = float(value)
    if not 0 <= rate <= 1:
        raise ValueError("expected a number from 0 to 1")
    return rate


def oidc_providers(value: str) -> list[dict[str, Any]]:
    """``[{"id", "name", "server_url", "client_id", "secret"}, ...]``: the OpenID Providers (docs/security.md)."""
    providers = env.json_list(value, "providers")
    keys = ("id", "name", "server_url", "client_id", "secret")
    parsed, seen = [], set()
    for index, provider in enumerate(providers):
        if not isinstance(provider, dict) or not all(isinstance(provider.get(key), str) for key in keys):
            raise ValueError(f"provider {index} needs the strings {', '.join(keys)}")
        if not provider["id"] or not provider["id"].replace("-", "").isalnum() or provider["id"] in seen:
            raise ValueError(f"provider {index} needs a unique id of letters, digits and dashes")
        seen.add(provider["id"])
        policy = _provider_policy(index, provider)
        parsed.append({key: provider[key] for key in keys} | {"server_url": http_url(provider["server_url"])} | policy)
    return parsed


def _provider_policy(index: int, provider: dict[str, Any]) -> dict[str, Any]:
    """A provider's optional policy keys (docs/identity.md): which claim proves the address, its domains,
    and whether signing out ends its session."""
    policy: dict[str, Any] = {}
    for key in ("trust_email", "end_session"):
        if key in provider:
            if not isinstance(provider[key], bool):
                raise ValueError(f"provider {index}: {key} must be true or false")
            policy[key] = provider[key]
    if "email_verified_claim" in provider:
        claim = provider["email_verified_claim"]
        if not isinstance(claim, str) or not claim.strip():
            raise ValueError(f"provider {index}: email_verified_claim must be a claim's name")
        policy["email_verified_claim"] = claim.strip()
    if "domains" in provider:
        domains = provider["domains"]
        if not isinstance(domains, list) or not all(isinstance(d, str) and d.strip().lstrip("@") for d in domains):
            raise ValueError(f"provider {index}: domains must be a list of e-mail domains")
        policy["domains"] = [d.strip().lower().lstrip("@") for d in domains]
    return policy


def domain_projects(value: str) -> dict[str, str]:
    """``example.com=backend,example.org=web``: new SSO users of a domain join that project."""
    pairs = {}
    for item in env.parse_csv(value):
        domain, equals, slug = item.partition("=")
        if not equals or not domain.strip() or not slug.strip():
            raise ValueError("expected domain=project-slug pairs separated by commas")
        pairs[domain.strip().lower()] = slug.strip()
    return pairs


def _production(values: Mapping[str, Any]) -> bool:
    return bool(values["SESSIONLEDGER_ENV"] == "production")


def optional_database_url(value: str) -> dict[str, Any] | None:
    return database_url(value) if value.strip() else None


AUDIT_SINK_SCHEMES = ("https", "http", "syslog+tcp", "syslog+tls", "bucket")


def audit_sink(value: str) -> str:
    """Where audit events are streamed (``governance.streaming``): empty, or a URL of one of its schemes."""
    value = value.strip()
    if not value:
        return ""
    parts = urlsplit(value)
    if parts.scheme not in AUDIT_SINK_SCHEMES or not (parts.netloc or parts.scheme == "bucket"):
        raise ValueError("expected https://…, syslog+tcp://host:port, syslog+tls://host:port or bucket:PREFIX")
    if parts.scheme.startswith("syslog") and not parts.port:
        raise ValueError("a syslog sink needs a port: syslog+tcp://host:6514")
    return value


STRING, INTEGER, COUNT, BOOLEAN, CSV, RATE = str, int, at_least(0), env.parse_bool, env.parse_csv, env.parse_rate

SCHEMA: tuple[Variable, ...] = (
    Variable("SESSIONLEDGER_ENV", choice(*ENVIRONMENTS), "development"),
    Variable("SESSIONLEDGER_DATA_DIR", STRING, str(BASE_DIR / ".data")),
    Variable("SECRET_KEY", STRING, DEV_SECRET),
    Variable("DEBUG", BOOLEAN, lambda v: not _production(v)),
    Variable("ALLOWED_HOSTS", CSV, lambda v: [] if _production(v) else ["*"]),
    Variable("SITE_URL", http_url, "http://127.0.0.1:8000"),
    Variable("CSRF_TRUSTED_ORIGINS", CSV, lambda v: [v["SITE_URL"]]),
    Variable("DATABASE_URL", database_url, lambda v: database_url("postgres://postgres@127.0.0.1:5432/sessionledger")),
    Variable("DATABASE_CONN_MAX_AGE", COUNT, 60),
    Variable("DATABASE_CONNECT_TIMEOUT", at_least(1), 5),
    Variable("DATABASE_STATEMENT_TIMEOUT", COUNT, 30),  # seconds, web requests only; 0: none
    Variable("DATABASE_WEB_ROLE", STRING, "sessionledger_web"),
    Variable("SESSIONLEDGER_RLS", BOOLEAN, True),
    Variable("DATABASE_TEST_NAME", STRING, ""),
    Variable(
        "ACCOUNT_EMAIL_VERIFICATION",
        choice("none", "optional", "mandatory"),
        lambda v: "mandatory" if _production(v) else "optional",
    ),
    Variable("ACCOUNT_ALLOW_SIGNUPS", BOOLEAN, True),
    Variable("SESSIONLEDGER_OIDC_PROVIDERS", oidc_providers, []),
    Variable("SESSIONLEDGER_SSO_DOMAINS", CSV, []),
    Variable("SESSIONLEDGER_SSO_JIT", BOOLEAN, True),
    Variable("SESSIONLEDGER_SSO_DEFAULT_PROJECTS", domain_projects, {}),
    Variable("SESSIONLEDGER_SSO_REQUIRED", BOOLEAN, False),
    Variable("SESSIONLEDGER_SSO_STAFF_PASSWORD", BOOLEAN, False),
    Variable("SESSIONLEDGER_SESSION_HOURS", at_least(1), 14 * 24),  # browser sessions (docs/identity.md)
    Variable("SESSIONLEDGER_SESSION_IDLE_MINUTES", COUNT, 0),  # 0: no idle timeout
    Variable("SESSIONLEDGER_TOKEN_MAX_DAYS", COUNT, 0),  # 0: no cap on API tokens' lifetime
    Variable("SESSIONLEDGER_SAML_PROVIDERS", saml_providers, []),  # config/saml.py
    Variable("SESSIONLEDGER_TOKEN_MINT_RATE", RATE, "20/hour"),
    Variable("SESSIONLEDGER_DEVICE_START_RATE", RATE, "30/min"),
    Variable("SESSIONLEDGER_DEVICE_CODE_RATE", RATE, "10/min"),
    Variable("SESSIONLEDGER_DEVICE_POLL_RATE", RATE, "120/min"),  # a CLI polls every 2 s; several fit
    Variable("SESSIONLEDGER_INVITE_RATE", RATE, "60/hour"),
    Variable("SESSIONLEDGER_SHARE_VIEW_RATE", RATE, "60/min"),
    Variable("SESSIONLEDGER_INGEST_RATE", RATE, "120/min"),
    Variable("SESSIONLEDGER_QUERY_RATE", RATE, "600/min"),
    Variable("SESSIONLEDGER_WRITE_RATE", RATE, "120/min"),
    Variable("SESSIONLEDGER_DEVICE_TOKEN_DAYS", at_least(1), 90),
    Variable("SESSIONLEDGER_PROXY_COUNT", COUNT, 0),
    Variable("EMAIL_BACKEND", STRING, "django.core.mail.backends.console.EmailBackend"),
    Variable("EMAIL_HOST", STRING, "localhost"),
    Variable("EMAIL_PORT", at_least(1), 25),
    Variable("EMAIL_HOST_USER", STRING, ""),
    Variable("EMAIL_HOST_PASSWORD", STRING, ""),
    Variable("EMAIL_USE_TLS", BOOLEAN, False),
    Variable("DEFAULT_FROM_EMAIL", STRING, "sessionledger@localhost"),
    Variable("S3_BUCKET", STRING, ""),
    Variable("S3_ENDPOINT_URL", optional_url, ""),
    Variable("S3_ACCESS_KEY_ID", STRING, ""),
    Variable("S3_SECRET_ACCESS_KEY", STRING, ""),
    Variable("S3_REGION", STRING, "us-east-1"),
    Variable("S3_CONNECT_TIMEOUT", at_least(1), 2),
    Variable("S3_READ_TIMEOUT", at_least(1), 10),
    Variable("S3_MAX_ATTEMPTS", at_least(1), 2),  # every call, the first included
    Variable("REDIS_URL", redis_url, "redis://127.0.0.1:6379/0"),
    Variable("SESSIONLEDGER_QUEUE", STRING, "celery"),
    Variable("SESSIONLEDGER_BROKER_VISIBILITY_TIMEOUT", at_least(1), 900),
    Variable(
        "SESSIONLEDGER_WORKER_HEARTBEAT_FILE", STRING, str(Path(tempfile.gettempdir()) / "sessionledger-worker.alive")
    ),
    Variable("CELERY_TASK_ALWAYS_EAGER", BOOLEAN, False),
    Variable("SESSIONLEDGER_FAULT_PROCESS_DELAY", float, 0.0),  # end-to-end fault tests only
    Variable("SESSIONLEDGER_SWEEP_AFTER_SECONDS", at_least(1), 300),
    Variable("SESSIONLEDGER_SWEEP_EVERY", at_least(1), 60),
    Variable("SESSIONLEDGER_REAP_EVERY", at_least(1), 5),
    Variable("SESSIONLEDGER_PAGE_CACHE_SECONDS", COUNT, 24 * 3600),
    Variable("SESSIONLEDGER_ACCESS_LOG_DAYS", at_least(1), 365),
    Variable("SESSIONLEDGER_AUDIT_DAYS", at_least(1), 730),
    Variable("SESSIONLEDGER_SCIM_TOKEN", STRING, ""),
    # Forges (docs/forges.md): the GitHub App, and GitLab's webhook and API.
    Variable("SESSIONLEDGER_GITHUB_APP_ID", STRING, ""),
    Variable("SESSIONLEDGER_GITHUB_APP_PRIVATE_KEY", STRING, ""),  # PEM; usually _FILE
    Variable("SESSIONLEDGER_GITHUB_WEBHOOK_SECRET", STRING, ""),
    Variable("SESSIONLEDGER_GITHUB_API_URL", http_url, "https://api.github.com"),
    Variable("SESSIONLEDGER_GITLAB_URL", http_url, "https://gitlab.com"),
    Variable("SESSIONLEDGER_GITLAB_TOKEN", STRING, ""),
    Variable("SESSIONLEDGER_GITLAB_WEBHOOK_SECRET", STRING, ""),
    Variable("SESSIONLEDGER_MODEL_PRICES", STRING, ""),
    Variable("SESSIONLEDGER_MAX_RAW_BYTES", at_least(1), 10 * 1024 * 1024),
    # Compressed request bodies: gzip never grows text by more than a little, plus room for metadata.
    Variable(
        "SESSIONLEDGER_MAX_UPLOAD_BYTES",
        at_least(1),
        lambda v: v["SESSIONLEDGER_MAX_RAW_BYTES"] + v["SESSIONLEDGER_MAX_RAW_BYTES"] // 10 + 2**20,
    ),
    Variable("SESSIONLEDGER_MAX_GZIP_MEMBERS", at_least(1), 64),
    # A resumable upload's part (docs/api.md "Resumable uploads"): what a slow link carries between cuts.
    Variable("SESSIONLEDGER_UPLOAD_PART_BYTES", at_least(1024), 256 * 1024),
    Variable("SESSIONLEDGER_MAX_CONTENT_BYTES", at_least(1), lambda v: 8 * v["SESSIONLEDGER_MAX_RAW_BYTES"]),
    Variable("SESSIONLEDGER_MAX_METADATA_BYTES", at_least(1), 2**20),
    Variable("SESSIONLEDGER_MAX_ATTRIBUTION_BYTES", at_least(1), 4 * 2**20),  # one Agent Trace record
    Variable("SESSIONLEDGER_PROCESS_CPU_SECONDS", at_least(1), 30),
    Variable("SESSIONLEDGER_PROCESS_TIME_LIMIT", at_least(1), 180),
    Variable("SESSIONLEDGER_PROCESS_MAX_ATTEMPTS", at_least(1), 3),
    Variable("SESSIONLEDGER_MAX_QUEUE_DEPTH", COUNT, 1000),
    Variable("SESSIONLEDGER_MAX_PROJECT_QUEUE_DEPTH", COUNT, 250),
    Variable("SESSIONLEDGER_BACKPRESSURE_RETRY_AFTER", at_least(1), 30),
    Variable("SESSIONLEDGER_PROJECT_CONCURRENCY", COUNT, max(1, (os.cpu_count() or 2) - 1)),
    Variable("SESSIONLEDGER_SLOT_LEASE_SECONDS", at_least(3), 15),  # renewed every third of it
    Variable("SESSIONLEDGER_CACHE_PREFIX", STRING, "sl"),
    Variable("SECURE_HSTS_SECONDS", COUNT, lambda v: 31536000 if _production(v) else 0),
    Variable("SECURE_SSL_REDIRECT", BOOLEAN, False),
    Variable("LOG_LEVEL", choice(*LOG_LEVELS, fold=str.upper), "INFO"),
    Variable("LOG_FORMAT", choice("json", "text"), "json"),
    Variable("SESSIONLEDGER_METRICS_TOKEN", STRING, ""),
    Variable("SESSIONLEDGER_WORKER_METRICS_PORT", COUNT, 0),
    Variable("PROMETHEUS_MULTIPROC_DIR", STRING, ""),  # prometheus_client reads it itself
    Variable("SENTRY_DSN", optional_url, ""),
    Variable("SENTRY_TRACES_SAMPLE_RATE", sample_rate, 0.0),
    # The audit trail's integrity and its copy off the box (docs/security.md "Audit trail").
    Variable("DATABASE_OWNER_URL", optional_database_url, None),
    Variable("SESSIONLEDGER_AUDIT_SINK", audit_sink, ""),
    Variable("SESSIONLEDGER_AUDIT_SINK_SECRET", STRING, ""),
    Variable("SESSIONLEDGER_AUDIT_SINK_CA_FILE", STRING, ""),
)
NAMES = frozenset(variable.name for variable in SCHEMA)
_SECRET_PARTS = ("SECRET", "PASSWORD", "TOKEN", "URL", "DSN", "OIDC")  # values that may hold credentials


def _rules(values: Mapping[str, Any]) -> list[str]:
    """What no single variable can say: production refuses the development conveniences."""
    problems = []
    if values["SESSIONLEDGER_SSO_REQUIRED"] and not (
        values["SESSIONLEDGER_OIDC_PROVIDERS"] or values["SESSIONLEDGER_SAML_PROVIDERS"]
    ):
        problems.append(
            "SESSIONLEDGER_SSO_REQUIRED needs at least one provider in SESSIONLEDGER_OIDC_PROVIDERS"
            " or SESSIONLEDGER_SAML_PROVIDERS"
        )
    oidc_ids = {provider["id"] for provider in values["SESSIONLEDGER_OIDC_PROVIDERS"]}
    if clash := sorted(oidc_ids & {provider["id"] for provider in values["SESSIONLEDGER_SAML_PROVIDERS"]}):
        # one id names one identity provider in accounts and audit events
        problems.append(f"SESSIONLEDGER_SAML_PROVIDERS reuses an id of SESSIONLEDGER_OIDC_PROVIDERS: {clash[0]}")
    if not _production(values):
        return problems
    if values["DEBUG"]:
        problems.append("DEBUG must be off when SESSIONLEDGER_ENV=production")
    if values["SECRET_KEY"] == DEV_SECRET or len(values["SECRET_KEY"]) < 32:
        problems.append("SECRET_KEY (or SECRET_KEY_FILE) must be set to 32+ random characters in production")
    return problems


def load(schema: tuple[Variable, ...] = SCHEMA) -> dict[str, Any]:
    """Every variable's value; raises ConfigError naming every malformed one (one line)."""
    values: dict[str, Any] = {}
    problems: list[str] = []
    for variable in schema:
        try:
            text = env.raw(variable.name)
        except env.ConfigError as exc:
            problems.append(str(exc))
            text = None
        if text is None:
            values[variable.name] = variable.default_for(values)
            continue
        try:
            values[variable.name] = variable.parse(text)
        except ValueError as exc:
            if any(part in variable.name for part in _SECRET_PARTS):  # never echo a password
                problems.append(f"{variable.name} is not valid: {exc}")
            else:
                shown = text if len(text) <= 80 else text[:77] + "..."
                problems.append(f"{variable.name}={shown!r} is not valid: {exc}")
            values[variable.name] = variable.default_for(values)  # later defaults may depend on it
    if not problems:
        problems = _rules(values)
    if problems:
        raise env.ConfigError("; ".join(problems))
    return values


PREFIX = "SESSIONLEDGER_"
# SESSIONLEDGER_* names that others read from the same environment: the client's settings (SESSIONLEDGER_<KEY>
# of docs/client.md "Configuration", its hook probe and inline uploads) on a developer's machine, and the
# test suite's and benches' own. tests/test_config.py holds the client's part to the client's code.
CLIENT_KEYS = [
    "SERVER",
    "TOKEN",
    "PROJECT",
    "REPOS",
    "MAX_RAW_BYTES",
    "IMAGE_THRESHOLD",
    "REDACTION",
    "UPLOAD_TIMEOUT",
    "RESUMABLE_THRESHOLD",
    "COMMAND_TIMEOUT",
    "UPLOADER_MAX_SECONDS",
    "RETRY_BASE_SECONDS",
    "RETRY_MAX_SECONDS",
    "AUTO_CHECKPOINT_ON_CLEAR",
    "AUTO_RESUME_ON_START",
    "VERIFY_BEFORE_CLEAR",
    "CONTEXT_BUDGET",
    "CONTEXT_PROMPTS",
    "CONTEXT_TIMEOUT",
    "PROBE",
    "UPLOAD_INLINE",
]
TOOLING_KEYS = ("FIXTURES", "BENCH_DB", "WORK_LOG")
OTHER_READERS = frozenset(PREFIX + key for key in (*CLIENT_KEYS, *TOOLING_KEYS))


def unknown(environ: Mapping[str, str], schema: tuple[Variable, ...] = SCHEMA) -> list[str]:
    """One line per ``SESSIONLEDGER_*`` variable in ``environ`` that nothing reads (a typo, or a setting
    from another version, would otherwise pass silently, its default in force), with the setting it
    nearly names when there is one. The client's own names, which share the environment, are left alone."""
    known = {variable.name for variable in schema}
    # Compared without the shared prefix, which would make any two names look alike.
    suffixes = {known_name.removeprefix(PREFIX): known_name for known_name in known}
    lines = []
    for name in sorted(environ):
        base = name.removesuffix("_FILE")
        if not base.startswith(PREFIX) or name in known or base in known or base in OTHER_READERS:
            continue
        if close := difflib.get_close_matches(base.removeprefix(PREFIX), suffixes, n=1, cutoff=0.8):
            lines.append(f"{name} is not a setting: did you mean {suffixes[close[0]]}?")
        else:
            lines.append(f'{name} is not a setting: ignored (README.md "Configuration" lists them all)')
    return lines


def load_or_exit() -> dict[str, Any]:
    """``load()``, or one line on stderr and exit: the process never starts half-configured."""
    for line in unknown(os.environ):
        print(f"sessionledger: configuration warning: {line}", file=sys.stderr, flush=True)
    try:
        return load()
    except env.ConfigError as exc:
        message = " ".join(str(exc).split())  # one line whatever a value held
        print(f"sessionledger: configuration error: {message}", file=sys.stderr, flush=True)
        raise SystemExit(EXIT_CODE) from None

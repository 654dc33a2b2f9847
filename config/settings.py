"""Django settings. Every value from the environment is declared once in config/variables.py."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import jinja2
from botocore.config import Config

from config import saml
from config.logging import logging_config, sentry_init
from config.variables import load_or_exit
from sessionledger.core.version import __version__ as SESSIONLEDGER_VERSION

# A malformed variable stops start-up here with one line naming it. Lowercase: not a Django setting.
env = load_or_exit()

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env["SESSIONLEDGER_DATA_DIR"])
ENVIRONMENT = env["SESSIONLEDGER_ENV"]
PRODUCTION = ENVIRONMENT == "production"

SECRET_KEY = env["SECRET_KEY"]
DEBUG = env["DEBUG"]
ALLOWED_HOSTS = env["ALLOWED_HOSTS"]
SITE_URL = env["SITE_URL"]
CSRF_TRUSTED_ORIGINS = env["CSRF_TRUSTED_ORIGINS"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's files, served from here (no CDN)
    "django_prometheus",
    "frontend",  # before allauth: its templates restyle allauth's pages
    "allauth",
    "allauth.account",
    "allauth.socialaccount",
    "allauth.socialaccount.providers.openid_connect",
    "allauth.socialaccount.providers.saml",  # SAML 2.0 through python3-saml (docs/saml.md)
    "projects",
    "sessions_app",
    "governance",  # after sessions_app: its admin replaces the projects app's User admin
    "integrations",
]

MIDDLEWARE = [
    "config.logging.RequestIdMiddleware",
    "config.client_wheel.VersionHeaderMiddleware",
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "config.middleware.UnreadableRequestMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "projects.audit_trail.AuditRequestMiddleware",  # who and from where, for the audit trail
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
    "config.middleware.DatabaseUnavailableMiddleware",
    "frontend.dependency_errors.DependencyErrorMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "config" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "config.client_wheel.client_install",
                "governance.sso.context",
            ],
        },
    },
    {  # the markup Python renderers write: macros in frontend/jinja2/ (frontend/templating.py)
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        "APP_DIRS": True,
        "OPTIONS": {"environment": "frontend.jinja_environment.environment", "undefined": jinja2.StrictUndefined},
    },
]

DATABASES = {
    "default": {**env["DATABASE_URL"], "CONN_MAX_AGE": env["DATABASE_CONN_MAX_AGE"], "CONN_HEALTH_CHECKS": True}
}
# A database that does not answer is a quick 503 (config/middleware.py), not a request thread held for
# minutes: libpq gives up connecting after this, and a web request's statements are cut after
# DATABASE_STATEMENT_TIMEOUT (set by config/wsgi.py, so migrations and the worker are not bound by it).
DATABASES["default"]["OPTIONS"] = {
    "connect_timeout": env["DATABASE_CONNECT_TIMEOUT"],
    **DATABASES["default"].get("OPTIONS", {}),
}
DATABASE_STATEMENT_TIMEOUT = env["DATABASE_STATEMENT_TIMEOUT"]
# Row-level security (projects/rls.py): tenant queries run as this role, which owns no tables.
DATABASE_WEB_ROLE = env["DATABASE_WEB_ROLE"]
SESSIONLEDGER_RLS = env["SESSIONLEDGER_RLS"]
DATABASES["default"]["TEST"] = {"NAME": env["DATABASE_TEST_NAME"] or None}
# The owner login runs migrations and maintenance only (governance/dbroles.py); web and worker log in with
# DATABASE_URL, which may then not UPDATE or DELETE audit events. Without it, one login does both.
DATABASES["owner"] = {
    **(env["DATABASE_OWNER_URL"] or DATABASES["default"]),
    "CONN_MAX_AGE": 0,
    "TEST": {"MIRROR": "default"},
}
DATABASE_RUNTIME_USER = DATABASES["default"]["USER"]
DATABASE_ROLES_SPLIT = DATABASES["owner"]["USER"] != DATABASE_RUNTIME_USER
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "projects.User"

AUTHENTICATION_BACKENDS = [
    # Django's and allauth's password backends, refusing passwords when SSO is required (governance/sso.py)
    "governance.sso.PasswordBackend",
    "governance.sso.AllauthPasswordBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

# django-allauth: e-mail is the login; no usernames anywhere. Joining a project needs a verified address
# (projects/addresses.py); in production nobody signs in before verifying, and sign-up answers the same
# whether or not the address already has an account (allauth's enumeration prevention needs "mandatory").
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_USER_MODEL_USERNAME_FIELD = None
ACCOUNT_EMAIL_VERIFICATION = env["ACCOUNT_EMAIL_VERIFICATION"]
ACCOUNT_PREVENT_ENUMERATION = True
ACCOUNT_ALLOW_SIGNUPS = env["ACCOUNT_ALLOW_SIGNUPS"]
# Budgets of projects/limits.py; a client's address is REMOTE_ADDR, or what the outermost of
# SESSIONLEDGER_PROXY_COUNT proxies in front saw (REST_FRAMEWORK's NUM_PROXIES below).
SESSIONLEDGER_TOKEN_MINT_RATE = env["SESSIONLEDGER_TOKEN_MINT_RATE"]
SESSIONLEDGER_DEVICE_START_RATE = env["SESSIONLEDGER_DEVICE_START_RATE"]
SESSIONLEDGER_DEVICE_CODE_RATE = env["SESSIONLEDGER_DEVICE_CODE_RATE"]
# A CLI polls every 2 s (30/min); several logins from behind one address fit.
SESSIONLEDGER_DEVICE_POLL_RATE = env["SESSIONLEDGER_DEVICE_POLL_RATE"]
SESSIONLEDGER_INVITE_RATE = env["SESSIONLEDGER_INVITE_RATE"]
# Views of one share link (anonymous readers; its pages come from the page cache).
SESSIONLEDGER_SHARE_VIEW_RATE = env["SESSIONLEDGER_SHARE_VIEW_RATE"]
SESSIONLEDGER_DEVICE_TOKEN_DAYS = env["SESSIONLEDGER_DEVICE_TOKEN_DAYS"]
ACCOUNT_ADAPTER = "governance.adapters.AccountAdapter"
# Single sign-on (docs/security.md "Single sign-on"): OpenID Connect, authorization code with PKCE; allauth
# reads each provider's discovery document and checks the ID token's signature (JWKS), issuer and audience;
# governance/oidc.py adds the nonce. Policies are read by governance/adapters.py.
SOCIALACCOUNT_ADAPTER = "governance.adapters.SocialAccountAdapter"
OIDC_POLICY_KEYS = ("trust_email", "email_verified_claim", "domains", "end_session")
SOCIALACCOUNT_PROVIDERS = {
    "openid_connect": {
        "provider_class": "governance.oidc.NonceOpenIDConnectProvider",
        "OAUTH_PKCE_ENABLED": True,
        "APPS": [
            {
                "provider_id": provider["id"],
                "name": provider["name"],
                "client_id": provider["client_id"],
                "secret": provider["secret"],
                "settings": {
                    "server_url": provider["server_url"],
                    "oauth_pkce_enabled": True,
                    # the provider's policy (governance/oidc.py, docs/identity.md)
                    **{key: provider[key] for key in OIDC_POLICY_KEYS if key in provider},
                },
            }
            for provider in env["SESSIONLEDGER_OIDC_PROVIDERS"]
        ],
    }
}
# SAML 2.0 (docs/saml.md): each SESSIONLEDGER_SAML_PROVIDERS entry becomes an app of allauth's saml
# provider, its URLs under /accounts/saml/<id>/; the policies below apply to it as to OpenID Connect.
SOCIALACCOUNT_PROVIDERS["saml"] = {"APPS": [saml.allauth_app(p) for p in env["SESSIONLEDGER_SAML_PROVIDERS"]]}
SOCIALACCOUNT_ONLY = False
SOCIALACCOUNT_AUTO_SIGNUP = True
# An address the provider verified signs in to the account that already has it (the company owns it).
SOCIALACCOUNT_EMAIL_AUTHENTICATION = True
SOCIALACCOUNT_EMAIL_AUTHENTICATION_AUTO_CONNECT = True
SOCIALACCOUNT_STORE_TOKENS = False
SOCIALACCOUNT_REQUESTS_TIMEOUT = 5  # the identity provider's discovery, token and JWKS calls
SESSIONLEDGER_SSO_DOMAINS = [domain.lower().lstrip("@") for domain in env["SESSIONLEDGER_SSO_DOMAINS"]]
SESSIONLEDGER_SSO_JIT = env["SESSIONLEDGER_SSO_JIT"]
SESSIONLEDGER_SSO_DEFAULT_PROJECTS = env["SESSIONLEDGER_SSO_DEFAULT_PROJECTS"]
SESSIONLEDGER_SSO_REQUIRED = env["SESSIONLEDGER_SSO_REQUIRED"]
SESSIONLEDGER_SSO_STAFF_PASSWORD = env["SESSIONLEDGER_SSO_STAFF_PASSWORD"]
# Browser sessions' lifetime and idle timeout, and API tokens' longest life (governance/browser_sessions.py)
SESSIONLEDGER_SESSION_HOURS = env["SESSIONLEDGER_SESSION_HOURS"]
SESSIONLEDGER_SESSION_IDLE_MINUTES = env["SESSIONLEDGER_SESSION_IDLE_MINUTES"]
SESSIONLEDGER_TOKEN_MAX_DAYS = env["SESSIONLEDGER_TOKEN_MAX_DAYS"]
SESSION_COOKIE_AGE = SESSIONLEDGER_SESSION_HOURS * 3600
MIDDLEWARE.insert(
    MIDDLEWARE.index("django.contrib.messages.middleware.MessageMiddleware") + 1,
    "governance.browser_sessions.SessionPolicyMiddleware",
)
# allauth's "continue" form redirects to the provider: the CSP's form-action must allow its origin.
SSO_ORIGINS = sorted(
    {"{0.scheme}://{0.netloc}".format(urlsplit(p["server_url"])) for p in env["SESSIONLEDGER_OIDC_PROVIDERS"]}
    | {saml.sso_origin(p) for p in env["SESSIONLEDGER_SAML_PROVIDERS"]}
)
LOGIN_REDIRECT_URL = "/"
ACCOUNT_LOGOUT_REDIRECT_URL = "/accounts/login/"

EMAIL_BACKEND = env["EMAIL_BACKEND"]
EMAIL_HOST = env["EMAIL_HOST"]
EMAIL_PORT = env["EMAIL_PORT"]
EMAIL_HOST_USER = env["EMAIL_HOST_USER"]
EMAIL_HOST_PASSWORD = env["EMAIL_HOST_PASSWORD"]
EMAIL_USE_TLS = env["EMAIL_USE_TLS"]
DEFAULT_FROM_EMAIL = env["DEFAULT_FROM_EMAIL"]
EMAIL_TIMEOUT = 10  # an SMTP server that does not answer fails the send, instead of holding the request

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

# The client's wheel the server serves at /client/ (config/client_wheel.py): built by the image and `make install`.
CLIENT_DIST_DIR = DATA_DIR / "client-dist"

STATIC_URL = "/static/"
STATIC_ROOT = DATA_DIR / "static"
# `collectstatic` fills STATIC_ROOT (the Docker image does it at build). Until it has run, WhiteNoise
# serves the apps' own static folders, so a server started any other way never renders unstyled.
WHITENOISE_USE_FINDERS = not (STATIC_ROOT / "frontend").is_dir()

# Object storage: S3 when S3_BUCKET is set, else local disk under the data directory.
S3_BUCKET = env["S3_BUCKET"]
if S3_BUCKET:
    BLOB_STORAGE = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": S3_BUCKET,
            "endpoint_url": env["S3_ENDPOINT_URL"] or None,
            "access_key": env["S3_ACCESS_KEY_ID"] or None,
            "secret_key": env["S3_SECRET_ACCESS_KEY"] or None,
            "region_name": env["S3_REGION"],
            "default_acl": None,  # the bucket is private; objects inherit that
            "querystring_auth": True,
            "querystring_expire": 60,
            "file_overwrite": True,
            "max_memory_size": 1024 * 1024,
            # Every S3 call: a bucket that accepts and never answers is given up in seconds (a 503, a
            # retried task), not botocore's 60 s × 5 attempts; the breaker of sessions_app/blobs.py then
            # fails the next calls at once for a few seconds.
            "client_config": Config(
                connect_timeout=env["S3_CONNECT_TIMEOUT"],
                read_timeout=env["S3_READ_TIMEOUT"],
                retries={"total_max_attempts": env["S3_MAX_ATTEMPTS"], "mode": "standard"},
            ),
        },
    }
else:
    BLOB_STORAGE = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(DATA_DIR / "blobs"), "base_url": None, "allow_overwrite": True},
    }
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
    "blobs": BLOB_STORAGE,
}
REDIS_URL = env["REDIS_URL"]
REDIS_CONNECT_TIMEOUT = 2  # seconds, for every Redis client: the cache, the broker, fairness, probes
REDIS_SOCKET_TIMEOUT = 5

CELERY_BROKER_URL = REDIS_URL.replace("unix://", "redis+socket://", 1)
# kombu's Redis transport, with a restore through a torn-down connection raised as the connection error it is
# (config/broker.py). rediss:// keeps kombu's own: the transport's name "rediss" is what turns TLS on.
if CELERY_BROKER_URL.startswith("redis://"):
    CELERY_BROKER_TRANSPORT = "config.broker:Transport"
CELERY_TASK_DEFAULT_QUEUE = env["SESSIONLEDGER_QUEUE"]
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# An unacknowledged task (its worker died) is redelivered after the visibility timeout. Workers look for
# such tasks every `unacked_restore_interval` seconds (every one of their looks, not one in ten as kombu
# does by default: a dead worker's task waited up to ~100 s beyond the timeout). A processing task does not
# wait for it: its fairness lease runs out in seconds and the reaper queues it again (docs/scaling.md). The
# timeout must outlast a task's hard time limit and the longest retry countdown (600 s; the worker holds a
# retried message unacknowledged until its countdown ends), or a live task would be delivered twice.
BROKER_VISIBILITY_TIMEOUT = env["SESSIONLEDGER_BROKER_VISIBILITY_TIMEOUT"]
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": BROKER_VISIBILITY_TIMEOUT,
    "unacked_restore_interval": max(1, min(10, BROKER_VISIBILITY_TIMEOUT // 2)),
    "unacked_restore_throttle": 1,
    "socket_timeout": REDIS_SOCKET_TIMEOUT,
    "socket_connect_timeout": REDIS_CONNECT_TIMEOUT,
    "socket_keepalive": True,
    "health_check_interval": 25,  # a connection a Redis failover left half-open is noticed, not waited on
    # One list per priority, and a worker takes from the first non-empty one: 0 first (docs/scaling.md
    # "Fairness between projects"; sessions_app/tasks.py says which task gets which).
    "priority_steps": [0, 3, 6, 9],
}
CELERY_TASK_DEFAULT_PRIORITY = 3
CELERY_BROKER_CONNECTION_TIMEOUT = REDIS_CONNECT_TIMEOUT
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2}
CELERY_TASK_ALWAYS_EAGER = env["CELERY_TASK_ALWAYS_EAGER"]
# Fault injection for the end-to-end fault tests only: a pause before each processing task.
SESSIONLEDGER_FAULT_PROCESS_DELAY = env["SESSIONLEDGER_FAULT_PROCESS_DELAY"]
# The worker's liveness file (config/worker.py).
SESSIONLEDGER_WORKER_HEARTBEAT_FILE = env["SESSIONLEDGER_WORKER_HEARTBEAT_FILE"]
SESSIONLEDGER_SWEEP_AFTER_SECONDS = env["SESSIONLEDGER_SWEEP_AFTER_SECONDS"]
SESSIONLEDGER_REAP_EVERY = env["SESSIONLEDGER_REAP_EVERY"]
CELERY_BEAT_SCHEDULE = {
    "sweep-processing": {"task": "sessions.sweep_processing", "schedule": env["SESSIONLEDGER_SWEEP_EVERY"]},
    # Dead fairness holders freed and parked sessions queued for free slots (sessions_app/fairness.py).
    "reap-slots": {
        "task": "sessions.reap_slots",
        "schedule": SESSIONLEDGER_REAP_EVERY,
        # First in line (a reap hands free slots on); one stuck behind a backlog anyway is dropped, not piled up.
        "options": {"expires": SESSIONLEDGER_REAP_EVERY, "priority": 0},
    },
    "apply-retention": {"task": "sessions.apply_retention", "schedule": 3600},
}
# Rendered pages of the session page, per session, content generation, filters and page
# (frontend/session_page/page_cache.py); 0 renders every request.
SESSIONLEDGER_PAGE_CACHE_SECONDS = env["SESSIONLEDGER_PAGE_CACHE_SECONDS"]
SESSIONLEDGER_ACCESS_LOG_DAYS = env["SESSIONLEDGER_ACCESS_LOG_DAYS"]
# Administrative events (projects.AuditEvent) older than this are deleted by the hourly retention run.
SESSIONLEDGER_AUDIT_DAYS = env["SESSIONLEDGER_AUDIT_DAYS"]
# SCIM 2.0 (/scim/v2, governance/scim.py): the identity provider's bearer token; empty turns SCIM off.
SESSIONLEDGER_SCIM_TOKEN = env["SESSIONLEDGER_SCIM_TOKEN"]
# Forges (integrations/, docs/forges.md): a GitHub App (its id, private key and webhook secret; the API's
# address for GitHub Enterprise) and GitLab (its address, an API token, the webhooks' secret token).
SESSIONLEDGER_GITHUB_APP_ID = env["SESSIONLEDGER_GITHUB_APP_ID"]
SESSIONLEDGER_GITHUB_APP_PRIVATE_KEY = env["SESSIONLEDGER_GITHUB_APP_PRIVATE_KEY"]
SESSIONLEDGER_GITHUB_WEBHOOK_SECRET = env["SESSIONLEDGER_GITHUB_WEBHOOK_SECRET"]
SESSIONLEDGER_GITHUB_API_URL = env["SESSIONLEDGER_GITHUB_API_URL"]
SESSIONLEDGER_GITLAB_URL = env["SESSIONLEDGER_GITLAB_URL"]
SESSIONLEDGER_GITLAB_TOKEN = env["SESSIONLEDGER_GITLAB_TOKEN"]
SESSIONLEDGER_GITLAB_WEBHOOK_SECRET = env["SESSIONLEDGER_GITLAB_WEBHOOK_SECRET"]
# Insights' estimated cost: JSON {model prefix: [input, output, cache write, cache read] USD per million
# tokens}; empty: the defaults of sessions_app/prices.py (see docs/ui.md).
SESSIONLEDGER_MODEL_PRICES = env["SESSIONLEDGER_MODEL_PRICES"]

SESSIONLEDGER_MAX_RAW_BYTES = env["SESSIONLEDGER_MAX_RAW_BYTES"]
# Compressed request bodies: gzip never grows text by more than a little, plus room for metadata.
SESSIONLEDGER_MAX_UPLOAD_BYTES = env["SESSIONLEDGER_MAX_UPLOAD_BYTES"]
# Hostile uploads (docs/api.md "Limits", docs/scaling.md): every bound the server keeps on what a member sends.
SESSIONLEDGER_MAX_GZIP_MEMBERS = env["SESSIONLEDGER_MAX_GZIP_MEMBERS"]
SESSIONLEDGER_UPLOAD_PART_BYTES = env["SESSIONLEDGER_UPLOAD_PART_BYTES"]
SESSIONLEDGER_MAX_CONTENT_BYTES = env["SESSIONLEDGER_MAX_CONTENT_BYTES"]
SESSIONLEDGER_MAX_METADATA_BYTES = env["SESSIONLEDGER_MAX_METADATA_BYTES"]
SESSIONLEDGER_MAX_ATTRIBUTION_BYTES = env["SESSIONLEDGER_MAX_ATTRIBUTION_BYTES"]  # one Agent Trace record
SESSIONLEDGER_PROCESS_CPU_SECONDS = env["SESSIONLEDGER_PROCESS_CPU_SECONDS"]
SESSIONLEDGER_PROCESS_TIME_LIMIT = env["SESSIONLEDGER_PROCESS_TIME_LIMIT"]
SESSIONLEDGER_PROCESS_MAX_ATTEMPTS = env["SESSIONLEDGER_PROCESS_MAX_ATTEMPTS"]
# Backpressure (sessions_app/backpressure.py): uploads are answered 503 + Retry-After while more than this many
# tasks wait in the Celery queue; 0 turns it off. docs/scaling.md: choosing it and the number of workers.
SESSIONLEDGER_MAX_QUEUE_DEPTH = env["SESSIONLEDGER_MAX_QUEUE_DEPTH"]
# The same bound for one project's unprocessed sessions, so one project's flood is refused before it delays others.
SESSIONLEDGER_MAX_PROJECT_QUEUE_DEPTH = env["SESSIONLEDGER_MAX_PROJECT_QUEUE_DEPTH"]
SESSIONLEDGER_BACKPRESSURE_RETRY_AFTER = env["SESSIONLEDGER_BACKPRESSURE_RETRY_AFTER"]
# Sessions of one project processed at once, across all workers; 0 = no limit. The default leaves one of
# a default worker's processes (one per core) to the other projects (docs/scaling.md).
SESSIONLEDGER_PROJECT_CONCURRENCY = env["SESSIONLEDGER_PROJECT_CONCURRENCY"]
# A slot's lease, renewed by the task's heartbeat every third of it: a dead worker's slot frees within it.
SESSIONLEDGER_SLOT_LEASE_SECONDS = env["SESSIONLEDGER_SLOT_LEASE_SECONDS"]

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "projects.auth.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    # JSON bodies: bounded nesting, no lone surrogates (config/parsers.py)
    "DEFAULT_PARSER_CLASSES": [
        "config.parsers.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "EXCEPTION_HANDLER": "projects.errors.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    "NUM_PROXIES": env["SESSIONLEDGER_PROXY_COUNT"],
    # Per token (or user): uploads; GETs; every other POST, PATCH or DELETE of sessions_app (why,
    # attribution/match, attribution records, share links, relinks): sessions_app/throttles.py.
    "DEFAULT_THROTTLE_RATES": {
        "ingest": env["SESSIONLEDGER_INGEST_RATE"],
        "query": env["SESSIONLEDGER_QUERY_RATE"],
        "write": env["SESSIONLEDGER_WRITE_RATE"],
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Sessionledger API",
    "DESCRIPTION": "Capture, store and query the AI-assistant conversations behind commits.",
    "VERSION": SESSIONLEDGER_VERSION,
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.schema.add_error_responses",
        "config.schema.lift_blank_defaults",
        "sessions_app.api_docs.document_filters_and_examples",
    ],
    # Swagger UI at /api/v1/docs: its files come from drf-spectacular-sidecar (no CDN), its init script
    # from a URL (SpectacularSwaggerSplitView), so the strict CSP below needs no exception.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None, "tryItOutEnabled": False},
}

CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": env["SESSIONLEDGER_CACHE_PREFIX"],
        # Every cache user fails open (rate limits, the page cache): a Redis that does not answer costs a
        # request 2 s at most, not a thread held until TCP gives up.
        "OPTIONS": {"socket_connect_timeout": REDIS_CONNECT_TIMEOUT, "socket_timeout": 2},
    }
}

# Security headers. Transcript content is untrusted: the CSP allows no inline script, no eval and
# no third-party origin, so even a rendering bug cannot make a transcript execute in the page.
INSTALLED_APPS.append("csp")
MIDDLEWARE.insert(MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1, "csp.middleware.CSPMiddleware")
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "font-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'", *SSO_ORIGINS],
    },
}
SESSION_COOKIE_SECURE = PRODUCTION
CSRF_COOKIE_SECURE = PRODUCTION
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SECURE_HSTS_SECONDS = env["SECURE_HSTS_SECONDS"]
SECURE_SSL_REDIRECT = env["SECURE_SSL_REDIRECT"]
# Load balancers, orchestrators and Prometheus use plain HTTP inside.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^livez$", r"^readyz$", r"^metrics$"]
if PRODUCTION:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Observability (docs/observability.md). Logs: one line per record on stderr, JSON by default, each
# with the request id that also reaches the Celery task of an upload (config/logging.py).
LOGGING = logging_config(level=env["LOG_LEVEL"], fmt=env["LOG_FORMAT"])
# Prometheus metrics (config/metrics.py): /metrics answers only with this token (Bearer or ?token=);
# unset, only direct loopback requests in development — nothing in production.
SESSIONLEDGER_METRICS_TOKEN = env["SESSIONLEDGER_METRICS_TOKEN"]
SESSIONLEDGER_WORKER_METRICS_PORT = env["SESSIONLEDGER_WORKER_METRICS_PORT"]
# prometheus_client reads this itself (before settings load); it is listed here to be documented.
PROMETHEUS_MULTIPROC_DIR = env["PROMETHEUS_MULTIPROC_DIR"]
PROMETHEUS_LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, float("inf"))
SENTRY_DSN = env["SENTRY_DSN"]
if SENTRY_DSN:
    sentry_init(
        dsn=SENTRY_DSN,
        environment=ENVIRONMENT,
        traces_sample_rate=str(env["SENTRY_TRACES_SAMPLE_RATE"]),
    )

# Audit events streamed off the box as they happen (docs/security.md "Audit trail"; governance/streaming.py):
# the sink, the HMAC key of webhook deliveries, the CA bundle a TLS syslog server is checked against.
SESSIONLEDGER_AUDIT_SINK = env["SESSIONLEDGER_AUDIT_SINK"]
SESSIONLEDGER_AUDIT_SINK_SECRET = env["SESSIONLEDGER_AUDIT_SINK_SECRET"]
SESSIONLEDGER_AUDIT_SINK_CA_FILE = env["SESSIONLEDGER_AUDIT_SINK_CA_FILE"]
CELERY_BEAT_SCHEDULE["audit-stream"] = {"task": "governance.audit_stream", "schedule": 30.0}  # retries, backoff
CELERY_BEAT_SCHEDULE["expire-audit"] = {"task": "governance.expire_audit", "schedule": 3600}  # as the owner
CELERY_BEAT_SCHEDULE["prune-deliveries"] = {"task": "integrations.prune_deliveries", "schedule": 3600}  # forges

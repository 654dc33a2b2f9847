"""Django settings, all read from the environment (see README's configuration table)."""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
import jinja2

from config import env
from config.logging import logging_config, sentry_init

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env.string("SESSIONLEDGER_DATA_DIR", str(BASE_DIR / ".data")))
ENVIRONMENT = env.string("SESSIONLEDGER_ENV", "development")
PRODUCTION = ENVIRONMENT == "production"

_DEV_SECRET = "dev-only-insecure-secret-key-change-me"
SECRET_KEY = env.string("SECRET_KEY", _DEV_SECRET)
DEBUG = env.boolean("DEBUG", not PRODUCTION)
if PRODUCTION and DEBUG:
    raise env.ConfigError("DEBUG must be off when SESSIONLEDGER_ENV=production")
if PRODUCTION and (SECRET_KEY == _DEV_SECRET or len(SECRET_KEY) < 32):
    raise env.ConfigError("SECRET_KEY (or SECRET_KEY_FILE) must be set to 32+ random characters in production")

ALLOWED_HOSTS = env.csv("ALLOWED_HOSTS", [] if PRODUCTION else ["*"])
SITE_URL = env.string("SITE_URL", "http://127.0.0.1:8000").rstrip("/")
CSRF_TRUSTED_ORIGINS = env.csv("CSRF_TRUSTED_ORIGINS", [SITE_URL])

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
    "projects",
    "sessions_app",
]

MIDDLEWARE = [
    "config.logging.RequestIdMiddleware",
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
    "default": dj_database_url.parse(
        env.string("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/sessionledger"),
        conn_max_age=env.integer("DATABASE_CONN_MAX_AGE", 60),
        conn_health_checks=True,
    )
}
# Row-level security (projects/rls.py): tenant queries run as this role, which owns no tables.
DATABASE_WEB_ROLE = env.string("DATABASE_WEB_ROLE", "sessionledger_web")
SESSIONLEDGER_RLS = env.boolean("SESSIONLEDGER_RLS", True)
DATABASES["default"]["TEST"] = {"NAME": env.string("DATABASE_TEST_NAME", "") or None}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "projects.User"

AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
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
ACCOUNT_EMAIL_VERIFICATION = env.choice(
    "ACCOUNT_EMAIL_VERIFICATION", ("none", "optional", "mandatory"), "mandatory" if PRODUCTION else "optional"
)
ACCOUNT_PREVENT_ENUMERATION = True
ACCOUNT_ALLOW_SIGNUPS = env.boolean("ACCOUNT_ALLOW_SIGNUPS", True)
# Budgets of projects/limits.py; a client's address is REMOTE_ADDR, or what the outermost of
# SESSIONLEDGER_PROXY_COUNT proxies in front saw (REST_FRAMEWORK's NUM_PROXIES below).
SESSIONLEDGER_TOKEN_MINT_RATE = env.rate("SESSIONLEDGER_TOKEN_MINT_RATE", "20/hour")
SESSIONLEDGER_DEVICE_START_RATE = env.rate("SESSIONLEDGER_DEVICE_START_RATE", "30/min")
SESSIONLEDGER_DEVICE_CODE_RATE = env.rate("SESSIONLEDGER_DEVICE_CODE_RATE", "10/min")
# A CLI polls every 2 s (30/min); several logins from behind one address fit.
SESSIONLEDGER_DEVICE_POLL_RATE = env.rate("SESSIONLEDGER_DEVICE_POLL_RATE", "120/min")
SESSIONLEDGER_INVITE_RATE = env.rate("SESSIONLEDGER_INVITE_RATE", "60/hour")
# Views of one share link (anonymous readers; its pages come from the page cache).
SESSIONLEDGER_SHARE_VIEW_RATE = env.rate("SESSIONLEDGER_SHARE_VIEW_RATE", "60/min")
SESSIONLEDGER_DEVICE_TOKEN_DAYS = env.integer("SESSIONLEDGER_DEVICE_TOKEN_DAYS", 90)
ACCOUNT_ADAPTER = "projects.adapters.AccountAdapter"
LOGIN_REDIRECT_URL = "/"
ACCOUNT_LOGOUT_REDIRECT_URL = "/accounts/login/"

EMAIL_BACKEND = env.string("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = env.string("EMAIL_HOST", "localhost")
EMAIL_PORT = env.integer("EMAIL_PORT", 25)
EMAIL_HOST_USER = env.string("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env.string("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env.boolean("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = env.string("DEFAULT_FROM_EMAIL", "sessionledger@localhost")

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = DATA_DIR / "static"
# `collectstatic` fills STATIC_ROOT (the Docker image does it at build). Until it has run, WhiteNoise
# serves the apps' own static folders, so a server started any other way never renders unstyled.
WHITENOISE_USE_FINDERS = not (STATIC_ROOT / "frontend").is_dir()

# Object storage: S3 when S3_BUCKET is set, else local disk under the data directory.
S3_BUCKET = env.string("S3_BUCKET", "")
if S3_BUCKET:
    BLOB_STORAGE = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": S3_BUCKET,
            "endpoint_url": env.string("S3_ENDPOINT_URL", "") or None,
            "access_key": env.string("S3_ACCESS_KEY_ID", "") or None,
            "secret_key": env.string("S3_SECRET_ACCESS_KEY", "") or None,
            "region_name": env.string("S3_REGION", "us-east-1"),
            "default_acl": None,  # the bucket is private; objects inherit that
            "querystring_auth": True,
            "querystring_expire": 60,
            "file_overwrite": True,
            "max_memory_size": 1024 * 1024,
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
AWS_S3_CONNECT_TIMEOUT = 5  # storage down must become a quick 503, not a hung request
AWS_S3_READ_TIMEOUT = 30
AWS_S3_MAX_ATTEMPTS = 2

REDIS_URL = env.string("REDIS_URL", "redis://127.0.0.1:6379/0")

CELERY_BROKER_URL = REDIS_URL.replace("unix://", "redis+socket://", 1)
CELERY_TASK_DEFAULT_QUEUE = env.string("SESSIONLEDGER_QUEUE", "celery")
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
BROKER_VISIBILITY_TIMEOUT = env.integer("SESSIONLEDGER_BROKER_VISIBILITY_TIMEOUT", 900)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": BROKER_VISIBILITY_TIMEOUT,
    "unacked_restore_interval": max(1, min(10, BROKER_VISIBILITY_TIMEOUT // 2)),
    "unacked_restore_throttle": 1,
    "socket_timeout": 5,
    "socket_connect_timeout": 2,
}
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2}
CELERY_TASK_ALWAYS_EAGER = env.boolean("CELERY_TASK_ALWAYS_EAGER", False)
# Fault injection for the end-to-end fault tests only: a pause before each processing task.
SESSIONLEDGER_FAULT_PROCESS_DELAY = float(env.string("SESSIONLEDGER_FAULT_PROCESS_DELAY", "0"))
SESSIONLEDGER_SWEEP_AFTER_SECONDS = env.integer("SESSIONLEDGER_SWEEP_AFTER_SECONDS", 300)
SESSIONLEDGER_REAP_EVERY = env.integer("SESSIONLEDGER_REAP_EVERY", 5)
CELERY_BEAT_SCHEDULE = {
    "sweep-processing": {"task": "sessions.sweep_processing", "schedule": env.integer("SESSIONLEDGER_SWEEP_EVERY", 60)},
    # Dead fairness holders freed and parked sessions queued for free slots (sessions_app/fairness.py).
    "reap-slots": {
        "task": "sessions.reap_slots",
        "schedule": SESSIONLEDGER_REAP_EVERY,
        "options": {"expires": SESSIONLEDGER_REAP_EVERY},  # a reap stuck behind a backlog is dropped, not piled up
    },
    "apply-retention": {"task": "sessions.apply_retention", "schedule": 3600},
}
# Rendered pages of the session page, per session, content generation, filters and page (frontend/page_cache.py);
# 0 renders every request.
SESSIONLEDGER_PAGE_CACHE_SECONDS = env.integer("SESSIONLEDGER_PAGE_CACHE_SECONDS", 24 * 3600)
SESSIONLEDGER_ACCESS_LOG_DAYS = env.integer("SESSIONLEDGER_ACCESS_LOG_DAYS", 365)
# Administrative events (projects.AuditEvent) older than this are deleted by the hourly retention run.
SESSIONLEDGER_AUDIT_DAYS = env.integer("SESSIONLEDGER_AUDIT_DAYS", 730)
# SCIM 2.0 (/scim/v2, sessions_app/scim.py): the identity provider's bearer token; empty turns SCIM off.
SESSIONLEDGER_SCIM_TOKEN = env.string("SESSIONLEDGER_SCIM_TOKEN", "")
# Insights' estimated cost: JSON {model prefix: [input, output, cache write, cache read] USD per million
# tokens}; empty: the defaults of sessions_app/prices.py (see docs/ui.md).
SESSIONLEDGER_MODEL_PRICES = env.string("SESSIONLEDGER_MODEL_PRICES", "")

SESSIONLEDGER_MAX_RAW_BYTES = env.integer("SESSIONLEDGER_MAX_RAW_BYTES", 10 * 1024 * 1024)
# Compressed request bodies: gzip never grows text by more than a little, plus room for metadata.
SESSIONLEDGER_MAX_UPLOAD_BYTES = env.integer(
    "SESSIONLEDGER_MAX_UPLOAD_BYTES", SESSIONLEDGER_MAX_RAW_BYTES + SESSIONLEDGER_MAX_RAW_BYTES // 10 + 2**20
)
# Hostile uploads (docs/api.md "Limits", docs/scaling.md): every bound the server keeps on what a member sends.
SESSIONLEDGER_MAX_GZIP_MEMBERS = env.integer("SESSIONLEDGER_MAX_GZIP_MEMBERS", 64)
SESSIONLEDGER_MAX_CONTENT_BYTES = env.integer("SESSIONLEDGER_MAX_CONTENT_BYTES", 8 * SESSIONLEDGER_MAX_RAW_BYTES)
SESSIONLEDGER_MAX_METADATA_BYTES = env.integer("SESSIONLEDGER_MAX_METADATA_BYTES", 2**20)
SESSIONLEDGER_MAX_ATTRIBUTION_BYTES = env.integer(
    "SESSIONLEDGER_MAX_ATTRIBUTION_BYTES", 4 * 2**20
)  # one Agent Trace record
SESSIONLEDGER_PROCESS_CPU_SECONDS = env.integer("SESSIONLEDGER_PROCESS_CPU_SECONDS", 30)
SESSIONLEDGER_PROCESS_TIME_LIMIT = env.integer("SESSIONLEDGER_PROCESS_TIME_LIMIT", 180)
SESSIONLEDGER_PROCESS_MAX_ATTEMPTS = env.integer("SESSIONLEDGER_PROCESS_MAX_ATTEMPTS", 3)
# Backpressure (sessions_app/backpressure.py): uploads are answered 503 + Retry-After while more than this many
# tasks wait in the Celery queue; 0 turns it off. docs/scaling.md: choosing it and the number of workers.
SESSIONLEDGER_MAX_QUEUE_DEPTH = env.integer("SESSIONLEDGER_MAX_QUEUE_DEPTH", 1000)
# The same bound for one project's unprocessed sessions, so one project's flood is refused before it delays others.
SESSIONLEDGER_MAX_PROJECT_QUEUE_DEPTH = env.integer("SESSIONLEDGER_MAX_PROJECT_QUEUE_DEPTH", 250)
SESSIONLEDGER_BACKPRESSURE_RETRY_AFTER = env.integer("SESSIONLEDGER_BACKPRESSURE_RETRY_AFTER", 30)
# Sessions of one project processed at once, across all workers; 0 = no limit. The default leaves one of
# a default worker's processes (one per core) to the other projects (docs/scaling.md).
SESSIONLEDGER_PROJECT_CONCURRENCY = env.integer("SESSIONLEDGER_PROJECT_CONCURRENCY", max(1, (os.cpu_count() or 2) - 1))
# A slot's lease, renewed by the task's heartbeat every third of it: a dead worker's slot frees within it.
SESSIONLEDGER_SLOT_LEASE_SECONDS = env.integer("SESSIONLEDGER_SLOT_LEASE_SECONDS", 15)

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
    "NUM_PROXIES": env.integer("SESSIONLEDGER_PROXY_COUNT", 0),
    # Per token (or user): uploads; GETs; every other POST, PATCH or DELETE of sessions_app (why,
    # attribution/match, attribution records, share links, relinks): sessions_app/throttles.py.
    "DEFAULT_THROTTLE_RATES": {
        "ingest": env.rate("SESSIONLEDGER_INGEST_RATE", "120/min"),
        "query": env.rate("SESSIONLEDGER_QUERY_RATE", "600/min"),
        "write": env.rate("SESSIONLEDGER_WRITE_RATE", "120/min"),
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Sessionledger API",
    "DESCRIPTION": "Capture, store and query the AI-assistant conversations behind commits.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.schema.add_error_responses",
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
        "KEY_PREFIX": env.string("SESSIONLEDGER_CACHE_PREFIX", "sl"),
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
        "form-action": ["'self'"],
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
SECURE_HSTS_SECONDS = env.integer("SECURE_HSTS_SECONDS", 31536000 if PRODUCTION else 0)
SECURE_SSL_REDIRECT = env.boolean("SECURE_SSL_REDIRECT", False)
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]  # load balancers and Prometheus use plain HTTP inside
if PRODUCTION:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Observability (docs/observability.md). Logs: one line per record on stderr, JSON by default, each
# with the request id that also reaches the Celery task of an upload (config/logging.py).
LOGGING = logging_config(level=env.string("LOG_LEVEL", "INFO").upper(), fmt=env.string("LOG_FORMAT", "json"))
# Prometheus metrics (config/metrics.py): /metrics answers only with this token (Bearer or ?token=);
# unset, only direct loopback requests in development — nothing in production.
SESSIONLEDGER_METRICS_TOKEN = env.string("SESSIONLEDGER_METRICS_TOKEN", "")
SESSIONLEDGER_WORKER_METRICS_PORT = env.integer("SESSIONLEDGER_WORKER_METRICS_PORT", 0)
# prometheus_client reads this itself (before settings load); it is listed here to be documented.
PROMETHEUS_MULTIPROC_DIR = env.string("PROMETHEUS_MULTIPROC_DIR", "")
PROMETHEUS_LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, float("inf"))
SENTRY_DSN = env.string("SENTRY_DSN", "")
if SENTRY_DSN:
    sentry_init(
        dsn=SENTRY_DSN,
        environment=ENVIRONMENT,
        traces_sample_rate=env.string("SENTRY_TRACES_SAMPLE_RATE", "0"),
    )

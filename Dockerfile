# The Sessionledger service image: web (gunicorn), worker and beat (celery) all run from it.
# docker-compose.yml shows how; every setting comes from the environment (README, "Configuration").
# Build and push: docs/deployment.md "The image".
#
# The base is pinned by version and by digest (the multi-platform index of python:3.11.13-slim-bookworm),
# so two builds a month apart start from the same bytes. To move it: pick the new tag, then
#   docker buildx imagetools inspect python:3.11.<n>-slim-bookworm --format '{{json .Manifest.Digest}}'
# and replace both here.
FROM python:3.11.13-slim-bookworm@sha256:86adf8dbadc3d6e82ee5dd2c74bec2e1c2467cdad47886280501df722372d2e1

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    # manage.py runs from /app; the installed packages carry templates, static files and migrations.
    PYTHONPATH=/app \
    DJANGO_SETTINGS_MODULE=config.settings \
    SESSIONLEDGER_DATA_DIR=/app/data

WORKDIR /app

# Dependencies first, so a code change does not reinstall them: exactly the locked versions, checked
# against their hashes (requirements.lock), so two builds a week apart install the same bytes.
COPY requirements.lock ./
RUN pip install --require-hashes --no-deps -r requirements.lock

COPY client/ client/
COPY pyproject.toml ./
COPY config/ config/
COPY projects/ projects/
COPY sessions_app/ sessions_app/
COPY governance/ governance/
COPY integrations/ integrations/
COPY frontend/ frontend/
# The server and the client package (client/) it declares; their dependencies are all installed above.
# The client's wheel is also kept in the image: the server serves it at /client/ (docs/client.md).
RUN pip install --no-deps ./client . \
    && pip wheel --no-deps --wheel-dir /app/data/client-dist ./client \
    && rm -rf build client/build

COPY manage.py ./

RUN useradd --system --uid 10001 --user-group --home-dir /app --no-create-home sessionledger \
    && mkdir -p /app/data \
    && chown sessionledger:sessionledger /app/data
# Numeric, so Kubernetes can check runAsNonRoot against the image itself.
USER 10001:10001

# Static files are served by WhiteNoise from STATIC_ROOT (= $SESSIONLEDGER_DATA_DIR/static), collected
# here, at build: at run time the root filesystem may be read-only (the Helm chart's default); only /tmp
# (uploads spooled to disk, gunicorn's heartbeat, beat's schedule) and PROMETHEUS_MULTIPROC_DIR are written.
RUN python manage.py collectstatic --no-input --verbosity 0

EXPOSE 8000
# The web service, with its gunicorn settings (config/gunicorn.py: the configuration checked before any
# worker forks, threaded workers, the app's log format); worker and beat override the command.
CMD ["gunicorn", "config.wsgi", "--config", "python:config.gunicorn", "--bind", "0.0.0.0:8000", \
     "--workers", "3", "--timeout", "120", "--access-logfile", "-"]

"""Set Django up against a throwaway benchmark database (never the one tests or `make run` use).

DATABASE_URL's server is reused with the database name ``sessionledger_bench``; blobs go to a
local-disk folder under .data/bench unless S3 is configured.
"""

from __future__ import annotations

import gzip
import io
import os
import sys
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
BENCH_DB = os.environ.get("SESSIONLEDGER_BENCH_DB", "sessionledger_bench")  # one per branch if several run


def setup() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("SESSIONLEDGER_DATA_DIR", str(ROOT / ".data" / "bench"))
    from config.localstack import ensure_environment

    ensure_environment()
    _create_database()
    os.environ["DATABASE_URL"] = urlunsplit(urlsplit(os.environ["DATABASE_URL"])._replace(path=f"/{BENCH_DB}"))
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def _create_database() -> None:
    import psycopg

    admin_url = urlunsplit(urlsplit(os.environ["DATABASE_URL"])._replace(path="/postgres"))
    with psycopg.connect(admin_url.replace("postgres://", "postgresql://", 1), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [BENCH_DB]).fetchone():
            conn.execute(f"CREATE DATABASE {BENCH_DB}")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def stored_session(project, user, raw: bytes, **metadata_overrides):
    """Stored and still ``processing``, as a worker finds it (``metadata_overrides`` replace the bench's
    defaults: a real commit's hash and facts, say)."""
    from projects.scoping import project_scope
    from sessions_app import ingest
    from sessions_app.models import Session

    ingest.enqueue_processing = lambda session_id: None  # no worker: this process is the worker
    gz = gzip.compress(raw)
    metadata = {
        "kind": "checkpoint",
        "feature_branch": "bench",
        "commit_hash": uuid.uuid4().hex + "0" * 8,
        "agent": "claude-code",
        "agent_session_id": str(uuid.uuid4()),
        "start_offset": 0,
        "end_offset": len(raw),
        "commit_message": "Bench session",
        **metadata_overrides,
    }
    with project_scope(project):
        result = ingest.session_ingest(
            project=project,
            author=user,
            metadata=metadata,
            transcript=ingest.Upload(io.BytesIO(gz), len(gz)),
            subagents=[],
            idempotency_key=None,
        )
        return Session.objects.select_related("project", "author").get(pk=result.session.pk)


def project_remove(project, user) -> None:
    """Delete a bench's throwaway project, its sessions' blobs and its user."""
    from projects.scoping import unscoped
    from sessions_app import blobs
    from sessions_app.models import Session

    with unscoped():
        sessions = list(Session.objects.filter(project=project))
    blobs.delete(*[k for s in sessions for k in (s.raw_storage_key, s.content_storage_key) if k and k != "k"])
    project.delete()
    user.delete()

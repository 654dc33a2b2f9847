"""End to end: an upload the server refuses because processing is behind is kept and sent later."""

from __future__ import annotations

import time
import uuid

import pytest
import redis
from django.conf import settings as django_settings

from sessions_app import fairness
from tests.client.conftest import expected_upload, head

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_segment_refused_for_backpressure_is_kept_and_sent_once_processing_catches_up(
    ledger, repo, claude, client_env, settings, monkeypatch
) -> None:
    settings.CELERY_TASK_DEFAULT_QUEUE = queue = f"backpressure-{uuid.uuid4().hex[:8]}"  # read by the check only
    # and a set of waiting projects of its own: another test's parked sessions count toward the bound
    monkeypatch.setattr(fairness, "WAITING", f"sl:fair:waiting:{queue}")
    settings.SESSIONLEDGER_MAX_QUEUE_DEPTH = 2
    settings.SESSIONLEDGER_BACKPRESSURE_RETRY_AFTER = 20
    broker = redis.Redis.from_url(django_settings.REDIS_URL)
    broker.rpush(queue, *[b"{}"] * 3)  # three tasks wait: one more than allowed
    try:
        claude.prompt("add a")
        (repo / "a.py").write_text("a = 1\n")
        claude.bash("git add -A && git commit -q -m 'Add a'")

        [entry] = client_env.queue()
        status = client_env.status(entry)
        assert status["state"] == "pending" and "behind with processing" in status["reason"]
        assert 17 <= status["next_at"] - time.time() <= 21  # the server's Retry-After
        assert ledger.sessions() == []

        broker.delete(queue)  # the workers caught up
        synced = client_env.cli("sync", cwd=repo)
        assert synced.returncode == 0, synced.stdout + synced.stderr
        [session] = ledger.sessions()
        assert session.commit_hash == head(repo) and ledger.raw(session) == expected_upload(claude.content())
        assert client_env.queue() == []
    finally:
        broker.delete(queue)

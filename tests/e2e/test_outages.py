"""A dependency's outage, longer than the probes' period × failure threshold (scaled down), with real
processes: gunicorn as production runs it, a Celery worker, a Redis of the test's own that is stopped
and started again, and a bucket that accepts connections and never answers. The web process stays
ready and live, the API answers (503 where a transcript is needed), the worker is back within seconds
of the return, and nothing is lost (docs/deployment.md "Outages")."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from django.conf import settings as django_settings

from config.celery import app
from projects import services
from tests.e2e.conftest import wait_for_status
from tests.e2e.redis_server import RedisServer
from tests.e2e.tcp_proxy import Blackhole
from tests.e2e.test_faults import RAW, _use_broker, _wait_for_attempts
from tests.e2e.web_server import gunicorn
from tests.uploads import commit_hash, metadata_for, upload

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
# The chart's probes, scaled down: every PROBE_PERIOD seconds, each answered within PROBE_TIMEOUT; an
# outage lasts longer than the period × the failure threshold (3) would allow.
PROBE_PERIOD, PROBE_TIMEOUT = 0.5, 2.0
OUTAGE_SECONDS = 8.0


@pytest.fixture
def own_redis(settings) -> Iterator[RedisServer]:
    """Broker, cache and fairness of this test (and of the processes it starts) on a Redis it may stop."""
    server = RedisServer()
    original = app.conf.broker_url
    settings.REDIS_URL = server.url
    _use_broker(server.url)
    yield server
    server.stop()
    _use_broker(original)


def _heartbeat_fresh(heartbeat: Path) -> bool:
    """The worker's liveness probe, run as the orchestrator runs it."""
    env = {**os.environ, "SESSIONLEDGER_WORKER_HEARTBEAT_FILE": str(heartbeat)}
    return (
        subprocess.run([sys.executable, "-m", "config.worker"], env=env, cwd=django_settings.BASE_DIR).returncode == 0
    )


def test_a_redis_outage_mid_task_loses_nothing_and_what_came_meanwhile_runs_on_its_return(
    world, api_as, start_worker, own_redis, tmp_path
) -> None:
    heartbeat = tmp_path / "worker.alive"
    env = {
        "REDIS_URL": own_redis.url,
        "SESSIONLEDGER_WORKER_HEARTBEAT_FILE": str(heartbeat),
        "SESSIONLEDGER_FAULT_PROCESS_DELAY": "2",
    }
    worker = start_worker(**env)
    api = api_as(world.member)
    running = upload(api, world.project.slug, RAW).json()["id"]
    _wait_for_attempts(running, 1)  # the worker sits in its task, the message unacknowledged in Redis
    own_redis.stop()
    outage_began = time.time()
    meanwhile = upload(api, world.project.slug, RAW, metadata_for(RAW, commit_hash=commit_hash("meanwhile")))
    assert meanwhile.status_code == 202  # kept: queued once the broker is back
    time.sleep(OUTAGE_SECONDS)
    assert heartbeat.stat().st_mtime > outage_began and _heartbeat_fresh(heartbeat)  # no restart for an outage
    own_redis.start()  # empty: whatever it held is gone
    if worker.poll() is not None:  # the worker gave up (it exits rather than hang): its supervisor restarts it
        start_worker(**env)
    done = [wait_for_status(session_id, seconds=20) for session_id in (running, meanwhile.json()["id"])]
    assert [session.status for session in done] == ["complete", "complete"]


def test_the_worker_lives_through_redis_stopped_mid_task_again_and_again_and_processes_after_each_return(
    world, api_as, start_worker, own_redis, tmp_path
) -> None:
    """The worker as production runs it (prefork) once exited on 1 of 3 Redis stops and processed nothing
    until restarted by hand: here nothing restarts it."""
    env = {"REDIS_URL": own_redis.url, "SESSIONLEDGER_FAULT_PROCESS_DELAY": "1"}
    env["SESSIONLEDGER_WORKER_HEARTBEAT_FILE"] = str(tmp_path / "worker.alive")
    worker = start_worker("--pool", "prefork", "--concurrency", "1", **env)
    api = api_as(world.member)
    for outage in range(3):
        running = upload(api, world.project.slug, RAW, metadata_for(RAW, commit_hash=commit_hash(f"in-{outage}")))
        _wait_for_attempts(running.json()["id"], 1)  # its message delivered and not yet acknowledged
        own_redis.stop()
        time.sleep(2)
        own_redis.start()
        after = upload(api, world.project.slug, RAW, metadata_for(RAW, commit_hash=commit_hash(f"after-{outage}")))
        done = [wait_for_status(session["id"], seconds=30) for session in (running.json(), after.json())]
        assert worker.poll() is None, f"the worker exited after outage {outage + 1}"
        assert [session.status for session in done] == ["complete", "complete"]


def _probe_while(base: str, stop: threading.Event, failures: list[str]) -> None:
    """The kubelet: /livez and /readyz every period, each within its timeout."""
    while not stop.wait(PROBE_PERIOD):
        for path in ("/livez", "/readyz"):
            try:
                status = requests.get(base + path, timeout=PROBE_TIMEOUT).status_code
            except requests.RequestException as exc:
                status = type(exc).__name__
            if status != 200:
                failures.append(f"{path}: {status}")


def _hammer(url: str, headers: dict[str, str], stop: threading.Event) -> None:
    """People and dashboards asking for transcripts and verbose health while the dependency is away."""
    while not stop.is_set():
        with contextlib.suppress(requests.RequestException):
            requests.get(url, headers=headers, timeout=30)


@pytest.mark.parametrize("outage", ["redis stopped", "bucket blackholed"])
def test_the_web_stays_ready_and_live_and_the_api_answers_through_an_outage(world, ingest, own_redis, outage) -> None:
    session = ingest(world.project, world.member, "kept")
    _, secret = services.token_create(user=world.member, name="outage")
    auth = {"Authorization": f"Bearer {secret}"}
    hole = Blackhole()
    env = {"REDIS_URL": own_redis.url, "S3_CONNECT_TIMEOUT": "1", "S3_READ_TIMEOUT": "1"}
    if outage == "bucket blackholed":
        env["S3_ENDPOINT_URL"] = f"http://127.0.0.1:{hole.port}"
    with gunicorn("--workers", "1", "--config", "python:config.gunicorn", **env) as base:
        if outage == "redis stopped":
            own_redis.stop()
        api = f"{base}/api/v1/projects/{world.project.slug}"
        stop, failures = threading.Event(), []
        threads = [threading.Thread(target=_probe_while, args=(base, stop, failures))]
        threads += [
            threading.Thread(target=_hammer, args=(url, auth, stop))
            for url in [f"{api}/sessions/{session.pk}/messages", f"{base}/readyz?verbose"] * 3
        ]
        for thread in threads:
            thread.start()
        time.sleep(OUTAGE_SECONDS)
        listed = requests.get(f"{api}/sessions", headers=auth, timeout=10)
        transcript = requests.get(f"{api}/sessions/{session.pk}/messages", headers=auth, timeout=10)
        verbose = requests.get(f"{base}/readyz?verbose", timeout=PROBE_TIMEOUT).json()["checks"]
        stop.set()
        for thread in threads:
            thread.join()
    hole.close()
    assert failures == []
    assert listed.status_code == 200 and listed.json()["results"][0]["id"] == str(session.pk)
    if outage == "redis stopped":
        assert transcript.status_code == 200 and verbose["redis"] == "down"
    else:
        assert transcript.status_code == 503 and transcript.json()["error"]["code"] == "storage_unavailable"
        assert verbose["storage"] == "down"

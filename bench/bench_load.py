"""Load: N concurrent uploaders for a fixed time against a local server (loopback only).

Starts gunicorn (config.wsgi) and a Celery worker on the benchmark database, runs the uploaders,
then waits for every accepted session to complete. Prints one JSON object: accepted/s, latency
p50/p95, status counts (only 2xx/429/503 are acceptable), how many accepted sessions completed, how
long the backlog took to drain after the load stopped, and the worker's throughput (completed per
second from the first upload to the last completion). ``--max-queue-depth`` and
``--max-project-queue-depth`` set the backpressure bounds (sessions_app/backpressure.py; 0 = off) of the
servers it starts. While the load runs it samples what waits — queued + parked sessions, and the
flooding project's unprocessed sessions — and prints the largest of each next to its bound (they may
exceed it by at most the uploads in flight); halfway through, another project uploads one session and
the time until it is processed is printed as ``other_project_s``.

    .venv/bin/python bench/bench_load.py [--uploaders 8] [--seconds 20] [--ingest-rate 100000/min]
        [--max-queue-depth 1000] [--max-project-queue-depth 250] [--worker-concurrency 2]
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import requests
from bench_parse import synthetic
from djangobench import ROOT, percentile, setup


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_services(port: int, rate: str, depth: int, project_depth: int, concurrency: int) -> list[subprocess.Popen]:
    env = {
        **os.environ,
        "SESSIONLEDGER_MAX_QUEUE_DEPTH": str(depth),
        "SESSIONLEDGER_MAX_PROJECT_QUEUE_DEPTH": str(project_depth),
        "SESSIONLEDGER_INGEST_RATE": rate,
        "SESSIONLEDGER_QUERY_RATE": "100000/min",
        "ALLOWED_HOSTS": "127.0.0.1",
        "SITE_URL": f"http://127.0.0.1:{port}",
    }
    bin_dir = Path(sys.executable).parent
    web = subprocess.Popen(
        [str(bin_dir / "gunicorn"), "config.wsgi", "-b", f"127.0.0.1:{port}", "-w", "3", "--log-level", "warning"],
        cwd=ROOT,
        env=env,
    )
    worker = subprocess.Popen(
        [str(bin_dir / "celery"), "-A", "config", "worker", "--concurrency", str(concurrency), "--loglevel", "WARNING"],
        cwd=ROOT,
        env=env,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if requests.get(f"http://127.0.0.1:{port}/healthz", timeout=5).ok:
                return [web, worker]
        except requests.RequestException:
            pass
        time.sleep(0.3)
    stop_processes([web, worker])
    raise SystemExit("the web server did not become healthy in 60 s")


def stop_processes(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        process.terminate()
        process.wait(timeout=30)


def _uploader(url: str, secret: str, body: bytes, until: float, results: list) -> None:
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {secret}"
    while time.monotonic() < until:
        commit = uuid.uuid4().hex + uuid.uuid4().hex[:8]
        metadata = json.dumps(
            {
                "kind": "checkpoint",
                "commit_hash": commit,
                "agent_session_id": str(uuid.uuid4()),
                "start_offset": 0,
                "end_offset": len(body),
                "feature_branch": "load",
            }
        )
        started = time.perf_counter()
        response = session.post(
            url,
            data={"metadata": metadata},
            files={"transcript": ("t.jsonl.gz", body)},
            headers={"Idempotency-Key": commit},
            timeout=60,
        )
        results.append((response.status_code, time.perf_counter() - started, response.json().get("id")))
        if response.status_code in (429, 503):
            wait = float(response.headers.get("Retry-After", "1"))
            time.sleep(max(0.0, min(wait, until - time.monotonic())))  # as told, but not past the run


def wait_complete(ids: list[str], seconds: float) -> int:
    from projects.scoping import unscoped
    from sessions_app.models import Session

    deadline = time.monotonic() + seconds
    while True:
        with unscoped():
            done = Session.objects.filter(pk__in=ids).exclude(status="processing").count()
        if done == len(ids) or time.monotonic() > deadline:
            return done
        time.sleep(0.5)


def _sample(project, until: float, samples: dict[str, list[int]]) -> None:
    """What waits, as often as it can be asked, until ``until``."""
    from django.conf import settings

    from projects.scoping import unscoped
    from sessions_app import backpressure, fairness

    while time.monotonic() < until:
        samples["waiting"].append(fairness.waiting_total(settings.CELERY_TASK_DEFAULT_QUEUE) or 0)
        with unscoped():
            samples["project"].append(backpressure.project_backlog(project))
        time.sleep(0.05)


def _other_project_upload(url: str, secret: str, body: bytes, at: float, result: dict) -> None:
    """One upload of another project during the flood; how long until it is processed."""
    time.sleep(max(0.0, at - time.monotonic()))
    sent = time.monotonic()
    metadata = {"kind": "checkpoint", "commit_hash": uuid.uuid4().hex + "0" * 8, "agent_session_id": "other"}
    response = requests.post(
        url,
        headers={"Authorization": f"Bearer {secret}"},
        data={"metadata": json.dumps({**metadata, "start_offset": 0, "end_offset": len(body)})},
        files={"transcript": ("t.jsonl.gz", body)},
        timeout=60,
    )
    result["status"] = response.status_code
    if response.status_code == 202 and wait_complete([response.json()["id"]], 120):
        result["seconds"] = round(time.monotonic() - sent, 1)


def _other_world(user):
    from projects.models import Membership, Project, Role
    from projects.services import token_create

    project, _ = Project.objects.get_or_create(slug="bench-other", defaults={"name": "Bench other"})
    Membership.objects.get_or_create(project=project, user=user, defaults={"role": Role.ADMIN})
    return project, token_create(user=user, name="bench-other")[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--uploaders", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--ingest-rate", default="100000/min")
    parser.add_argument("--transcript-kb", type=int, default=200)
    parser.add_argument("--max-queue-depth", type=int, default=1000)
    parser.add_argument("--max-project-queue-depth", type=int, default=250)
    parser.add_argument("--worker-concurrency", type=int, default=2)
    args = parser.parse_args()
    setup()
    from bench_ingest import bench_world

    from projects.scoping import unscoped

    with unscoped():
        project, user, secret = bench_world()
        other, other_secret = _other_world(user)
    port = free_port()
    processes = _start_services(
        port, args.ingest_rate, args.max_queue_depth, args.max_project_queue_depth, args.worker_concurrency
    )
    try:
        body = gzip.compress(synthetic(args.transcript_kb * 1024))
        url = f"http://127.0.0.1:{port}/api/v1/projects/{project.slug}/sessions"
        results: list = []
        until = time.monotonic() + args.seconds
        threads = [
            threading.Thread(target=_uploader, args=(url, secret, body, until, results)) for _ in range(args.uploaders)
        ]
        samples: dict[str, list[int]] = {"waiting": [], "project": []}
        threads.append(threading.Thread(target=_sample, args=(project, until, samples)))
        other_url = f"http://127.0.0.1:{port}/api/v1/projects/{other.slug}/sessions"
        other_result: dict = {}
        halfway = time.monotonic() + args.seconds / 2
        threads.append(
            threading.Thread(target=_other_project_upload, args=(other_url, other_secret, body, halfway, other_result))
        )
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        load_ended = time.monotonic()
        accepted = [r for r in results if r[0] in (200, 202)]
        completed = wait_complete([r[2] for r in accepted], 180)
        drained = time.monotonic()
    finally:
        stop_processes(processes)
    latencies = [r[1] for r in results]
    statuses = collections.Counter(r[0] for r in results)
    print(
        json.dumps(
            {
                "uploaders": args.uploaders,
                "seconds": args.seconds,
                "gzip_bytes": len(body),
                "accepted_per_s": round(len(accepted) / args.seconds, 1),
                "p50_ms": round(percentile(latencies, 0.5) * 1000, 1),
                "p95_ms": round(percentile(latencies, 0.95) * 1000, 1),
                "statuses": dict(statuses),
                "only_allowed_statuses": set(statuses) <= {200, 202, 429, 503},
                "accepted": len(accepted),
                "completed": completed,
                "refused_behind_503": statuses.get(503, 0),
                "max_waiting": max(samples["waiting"], default=0),
                "max_queue_depth": args.max_queue_depth,
                "max_project_waiting": max(samples["project"], default=0),
                "max_project_queue_depth": args.max_project_queue_depth,
                "other_project_s": other_result.get("seconds"),
                "drain_after_load_s": round(drained - load_ended, 1),
                "worker_processes": args.worker_concurrency,
                "processed_per_s": round(completed / max(drained - started, 0.001), 1),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()

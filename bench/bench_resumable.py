"""A big segment over a slow link that drops again and again (docs/client.md "Slow links").

The client's resumable upload (`sessionledger.resumable`, the uploader's code) sends a synthetic
transcript, gzipped and framed as the uploader frames it, to gunicorn on the benchmark database
through a loopback proxy that carries `--rate` bytes a second upstream and drops the connection
every `--cut-seconds` of that rate's bytes (tests/client/slow_server.py `CuttingProxy`). Between
attempts the client waits 2 s, as the uploader's first backoff does. Three ways are measured on
the same link:

- `parts`: the server's part store with its default part (256 KiB; scaled: 64 KiB, `--part-kb`);
- `s3_minimum_part`: the same protocol with 5 MiB parts, the smallest part S3 takes in a
  multipart upload (so what pre-signed part URLs straight into the bucket could do at best);
- `one_request`: the body in one request, as before (each cut restarts it from zero).

The doomed ways stop after `--give-up` cuts that stored nothing. Prints one JSON object per way:
arrived or not, seconds, cuts, bytes over the link against the body's size, parts sent again
after the server had stored them (must be 0).

    .venv/bin/python bench/bench_resumable.py            # scaled: 4 MB at 64 KB/s, a cut every 4 s
    .venv/bin/python bench/bench_resumable.py --full     # 20 MB at 16 KB/s, a cut every 60 s
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

from bench_load import free_port, stop_processes
from bench_outages import start_web
from djangobench import ROOT, setup

S3_MINIMUM_PART = 5 * 1024 * 1024


def transcript(mb: float) -> bytes:
    """Lines of a conversation whose text gzips about 2:1, like the real ones of the issue's case
    (a 10 MB transcript gzips to 4.6 MB): half random hex, half repeated prose."""
    lines, size, n = [], 0, 0
    while size < mb * 1e6:
        text = os.urandom(400).hex() + " the tokenizer keeps the offsets of every chunk it emits " * 8
        line = json.dumps({"type": "user", "uuid": str(uuid.UUID(int=n)), "message": {"content": text}})
        lines.append(line)
        size, n = size + len(line) + 1, n + 1
    return ("\n".join(lines) + "\n").encode()


def start_server(port: int, part_bytes: int) -> subprocess.Popen:
    env = {**os.environ, "ALLOWED_HOSTS": "127.0.0.1", "SITE_URL": f"http://127.0.0.1:{port}"}
    env |= {"SESSIONLEDGER_INGEST_RATE": "100000/min", "SESSIONLEDGER_WRITE_RATE": "100000/min"}
    env |= {"SESSIONLEDGER_UPLOAD_PART_BYTES": str(part_bytes), "SESSIONLEDGER_MAX_RAW_BYTES": str(64 * 2**20)}
    return start_web(port, env)


def body_for(raw: bytes, workdir: Path):
    """The multipart body the uploader would send for this transcript (metadata + gzip part)."""
    from sessionledger.multipart import Body, Part
    from tests.uploads import metadata_for

    metadata = metadata_for(raw, commit_hash=uuid.uuid4().hex + "0" * 8, agent_session_id=str(uuid.uuid4()))
    (workdir / "metadata.json").write_text(json.dumps(metadata))
    (workdir / "transcript.jsonl.gz").write_bytes(gzip.compress(raw, compresslevel=6, mtime=0))
    return Body(
        [
            Part("metadata", path=str(workdir / "metadata.json"), content_type="application/json"),
            Part(
                "transcript",
                path=str(workdir / "transcript.jsonl.gz"),
                filename="transcript.jsonl.gz",
                content_type="application/gzip",
            ),
        ]
    )


def run_way(way: str, raw: bytes, args: argparse.Namespace, secret: str, workdir: Path) -> dict:
    from sessionledger import resumable
    from sessionledger.api import ApiError, Client
    from tests.client.slow_server import CuttingProxy

    part = S3_MINIMUM_PART if way == "s3_minimum_part" else args.part_kb * 1024
    port = free_port()
    web = start_server(port, part)
    proxy = CuttingProxy(
        f"http://127.0.0.1:{port}", rate=args.rate_kb * 1000, cut_every=args.rate_kb * 1000 * args.cut_seconds
    )
    entry = workdir / way
    entry.mkdir()
    body = body_for(raw, entry)
    key = f"bench-{uuid.uuid4().hex}"
    started, attempts, stalled, arrived, message = time.monotonic(), 0, 0, False, ""
    try:
        client = Client(proxy.url, secret, timeout=120)
        record = resumable.materialise(str(entry), body, body.content_type)
        while stalled < args.give_up:
            attempts += 1
            held = record["received_bytes"]
            try:
                if way == "one_request":
                    client.post_stream(
                        "/projects/bench/sessions", iter(body), len(body), body.content_type, {"Idempotency-Key": key}
                    )
                else:
                    resumable.send(client, "bench", str(entry), record, key, lambda n, t: None)
                arrived = True
                break
            except ApiError as exc:
                message = exc.message
                stalled = stalled + 1 if record["received_bytes"] == held else 0
                time.sleep(2)
    finally:
        proxy.close()
        stop_processes([web])
    resent, stored = 0, set()
    for request, answer in proxy.exchanges:
        match = re.match(r"PUT (\S+/parts/\d+) ", request or "")
        if match:
            resent += match[1] in stored
            if answer and answer.split()[1] == "200":
                stored.add(match[1])
    return {
        "way": way,
        "part_bytes": None if way == "one_request" else part,
        "arrived": arrived,
        "seconds": round(time.monotonic() - started, 1),
        "attempts": attempts,
        "cuts": proxy.cuts,
        "body_mb": round(len(body) / 1e6, 2),
        "link_mb": round(proxy.received / 1e6, 2),
        "parts_stored": len(stored),
        "stored_parts_sent_again": resent,
        "last_message": message,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--full", action="store_true", help="20 MB at 16 KB/s, a cut every 60 s")
    parser.add_argument("--mb", type=float, default=4.0)
    parser.add_argument("--rate-kb", type=int, default=64)
    parser.add_argument("--cut-seconds", type=int, default=4)
    parser.add_argument("--part-kb", type=int, default=64)
    parser.add_argument("--give-up", type=int, default=3)
    parser.add_argument("--ways", default="parts,s3_minimum_part,one_request")
    args = parser.parse_args()
    if args.full:
        args.mb, args.rate_kb, args.cut_seconds, args.part_kb = 20.0, 16, 60, 256
    sys.path.insert(0, str(ROOT / "client"))
    setup()
    from bench_ingest import bench_world

    from projects.scoping import unscoped

    with unscoped():
        _, _, secret = bench_world()
    raw = transcript(args.mb)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        for way in args.ways.split(","):
            result = run_way(way, raw, args, secret, Path(tmp))
            result |= {"transcript_mb": round(len(raw) / 1e6, 1), "rate_kb_s": args.rate_kb}
            result["cut_every_s"] = args.cut_seconds
            print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()

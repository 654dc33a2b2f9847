"""Run every benchmark in bench/ and write one JSON report (``make bench``).

Each bench script stays runnable on its own and prints one JSON object; this runs them one after
another as subprocesses with quick arguments (``--full`` drops them: the scripts' own defaults),
adds the storage figures of a realistic transcript, derives the capacity estimate of
docs/scaling.md from the figures, and rewrites that document's figures table (bench/scaling_table.py)
after a run of every bench. The machine is shared and noisy: figures vary run to run by
10–30 %, and the load bench shares its two cores between the load generator, gunicorn, the worker
and PostgreSQL — read its numbers as a floor.

    .venv/bin/python bench/run_all.py [--only parse redact …] [--full] [--output PATH]

Needs DATABASE_URL / REDIS_URL for the Django benches (``make bench`` starts the embedded ones).
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import scaling_table

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
DEFAULT_OUTPUT = ROOT / "test-artifacts" / "bench" / "report.json"

# name → (script, quick arguments). Order: cheap, CPU-only first; the server benches last. A bench_*.py
# not listed here still runs (see all_benches), with its own defaults, before the load bench.
BENCHES: dict[str, tuple[str, list[str]]] = {
    "parse": ("bench_parse.py", ["--repeat", "5"]),
    "redact": ("bench_redact.py", ["--mb", "20", "--repeat", "3"]),
    "hook": ("bench_hook.py", ["--runs", "11"]),
    "ingest": ("bench_ingest.py", ["--sessions", "1000000", "--repeat", "10"]),
    "worker": ("bench_worker.py", ["--sizes-kb", "400", "1500", "3000", "9000", "--count", "8", "--small"]),
    # ~500 messages, ~3.5 MB: a long session; rendered and cached page 1 against read + decode
    "session_page": ("bench_session_page.py", ["--turns", "25", "--output-lines", "330", "--repeat", "7"]),
    "api_overhead": ("bench_api_overhead.py", ["--rows", "10000", "--repeat", "200"]),
    "insights": ("bench_insights.py", ["--sessions", "100000", "--repeat", "5"]),
    "scale": ("bench_scale.py", ["--sizes", "10000", "100000", "--repeat", "15", "--bulk-rows", "20000"]),
    "load": ("bench_load.py", ["--seconds", "10"]),
    "why": ("bench_why.py", ["--turns", "100", "--runs", "11"]),
    "export": ("bench_export.py", ["--sessions", "20000", "--blob-kb", "30"]),
    "attribution": ("bench_attribution.py", ["--sessions", "10"]),
}


def all_benches() -> dict[str, tuple[str, list[str]]]:
    """Every bench/bench_*.py: the known ones with quick arguments, any other with its own defaults."""
    found = {path.stem.removeprefix("bench_"): (path.name, []) for path in sorted(BENCH.glob("bench_*.py"))}
    known = {name: entry for name, entry in BENCHES.items() if name in found}
    extra = {name: entry for name, entry in found.items() if name not in BENCHES}
    ordered = [(name, entry) for name, entry in known.items() if name != "load"]
    ordered += list(extra.items()) + [(name, entry) for name, entry in known.items() if name == "load"]
    return dict(ordered)


# Assumptions of the capacity estimate (docs/scaling.md says where they come from).
ASSUMED_SESSION_RAW_MB = 1.0  # one captured segment (a commit's checkpoint), uncompressed JSONL
ASSUMED_RAW_MB_PER_DEVELOPER_DAY = 15.0  # transcript bytes a full-time assistant user produces per day
ASSUMED_SESSIONS_PER_DEVELOPER_DAY = 15  # commits/segments captured per developer per working day
WORKING_DAYS_PER_MONTH = 21
ASSUMED_ROW_KB = 12  # a session's row when bench_worker did not measure it (indexes add about as much again)


def run_bench(script: str, args: list[str], timeout: float) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, str(BENCH / script), *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"script": script, "args": args, "ok": False, "error": f"timed out after {timeout:.0f} s"}
    entry: dict[str, Any] = {"script": script, "args": args, "seconds": round(time.perf_counter() - started, 1)}
    try:
        entry["result"] = _last_json(done.stdout)
        entry["ok"] = done.returncode == 0
    except ValueError:
        entry["ok"] = False
    if not entry["ok"]:
        entry["error"] = (done.stderr or done.stdout)[-3000:]
    return entry


def _last_json(text: str) -> Any:
    """The JSON object a script printed (indented or on one line), ignoring anything before it."""
    start = text.find("{")
    if start < 0:
        raise ValueError("no JSON in the output")
    return json.loads(text[start:])


def storage_figures() -> dict[str, Any]:
    """Stored bytes per uncompressed transcript MB: the raw blob (gzip 6, as the client sends it) and
    the content document (gzip 1, as the worker writes it), for two synthetic transcripts."""
    sys.path.insert(0, str(BENCH))
    from bench_parse import synthetic as repetitive
    from bench_redact import synthetic as realistic

    from sessionledger.core.formats import parse_transcript

    figures = {}
    for name, raw in (("realistic", realistic(4_000_000)), ("repetitive", repetitive(4_000_000))):
        document = parse_transcript(raw).to_document(session_id="bench")
        content = gzip.compress(json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode(), 1)
        figures[name] = {
            "raw_bytes": len(raw),
            "raw_gzip_ratio": round(len(gzip.compress(raw, 6)) / len(raw), 3),
            "content_gzip_ratio": round(len(content) / len(raw), 3),
        }
    return figures


def capacity(report: dict[str, Any]) -> dict[str, Any]:
    """The estimate of docs/scaling.md, recomputed from this run's figures."""
    benches, estimate = report["benches"], {}
    worker = _result(benches, "worker")
    if worker:
        typical = _typical(worker)
        estimate["worker_measured"] = {
            "session_raw_bytes": typical["raw_bytes"],
            "seconds_per_session_median": typical["median_s"],
            "sessions_per_day_per_core": typical["sessions_per_day_per_core"],
            "at_50_percent_utilisation": typical["sessions_per_day_per_core"] // 2,
        }
    processing = _result(benches, "ingest", "processing")
    if processing:
        seconds = ASSUMED_SESSION_RAW_MB * 1e6 / (processing["mb_per_s"] * 1e6)
        estimate["worker_cpu_bound"] = {
            "derive_mb_per_s": processing["mb_per_s"],
            "assumed_session_raw_mb": ASSUMED_SESSION_RAW_MB,
            "seconds_per_session": round(seconds, 3),
            "sessions_per_day_per_core": int(86400 / seconds),
        }
    load = _result(benches, "load")
    if load and load.get("completed"):
        per_second = load["completed"] / load["seconds"]  # drained within the window + its tail
        estimate["end_to_end_measured"] = {
            "note": "load bench: 2 worker processes sharing 2 cores with gunicorn, Postgres and the uploaders",
            "session_raw_kb": 200,
            "accepted_per_s": load["accepted_per_s"],
            "sessions_per_day_per_core_floor": int(per_second / 2 * 86400),
        }
    ratios = report.get("storage", {}).get("realistic")
    if ratios:
        raw_month_mb = ASSUMED_RAW_MB_PER_DEVELOPER_DAY * WORKING_DAYS_PER_MONTH
        bucket = raw_month_mb * (ratios["raw_gzip_ratio"] + ratios["content_gzip_ratio"])
        row_kb = _measured_row_kb(worker) or ASSUMED_ROW_KB
        rows = ASSUMED_SESSIONS_PER_DEVELOPER_DAY * WORKING_DAYS_PER_MONTH * row_kb * 2 / 1024  # ×2: indexes
        estimate["storage_per_developer_month"] = {
            "assumed_raw_mb_per_day": ASSUMED_RAW_MB_PER_DEVELOPER_DAY,
            "working_days": WORKING_DAYS_PER_MONTH,
            "assumed_sessions_per_day": ASSUMED_SESSIONS_PER_DEVELOPER_DAY,
            "row_kb": round(row_kb, 1),
            "bucket_mb": round(bucket, 1),
            "postgres_mb": round(rows, 1),
        }
    return estimate


def _measured_row_kb(worker: dict[str, Any] | None) -> float | None:
    """Row size of the session size the estimate is made for."""
    return _typical(worker).get("row_bytes", 0) / 1024 or None if worker else None


def _typical(worker: dict[str, Any]) -> dict[str, Any]:
    """bench_worker's smallest size at or above the assumed session size (else its largest): erring high.

    Only the per-size entries carry ``raw_bytes``; the others (``small``, ``commit_wait``) are skipped."""
    sizes = sorted(
        (f for f in worker.values() if isinstance(f, dict) and "raw_bytes" in f), key=lambda f: f["raw_bytes"]
    )
    return next((f for f in sizes if f["raw_bytes"] >= ASSUMED_SESSION_RAW_MB * 1e6), sizes[-1])


def _result(benches: dict[str, Any], name: str, *keys: str) -> Any:
    value = benches.get(name, {}).get("result") if benches.get(name, {}).get("ok") else None
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def machine() -> dict[str, Any]:
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "note": "shared, noisy machine: expect 10-30 % variation between runs",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    benches = all_benches()
    parser.add_argument("--only", nargs="+", choices=sorted(benches), help="run only these")
    parser.add_argument("--full", action="store_true", help="each script's own (slower) defaults")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--timeout", type=float, default=1800, help="seconds allowed per bench")
    options = parser.parse_args(argv)
    report: dict[str, Any] = {
        "generated_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine_before": machine(),
        "benches": {},
    }
    for name in options.only or benches:
        script, quick = benches[name]
        print(f"bench: {name} …", file=sys.stderr, flush=True)
        report["benches"][name] = run_bench(script, [] if options.full else quick, options.timeout)
    report["storage"] = storage_figures()
    report["capacity"] = capacity(report)
    report["machine_after"] = machine()
    options.output.parent.mkdir(parents=True, exist_ok=True)
    options.output.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    print(f"report written to {options.output}", file=sys.stderr)
    if not options.only:  # a partial run would blank the other benches' rows
        scaling_table.update_doc(report)
        print(f"figures table rewritten in {scaling_table.DOC}", file=sys.stderr)
    failed = [name for name, entry in report["benches"].items() if not entry.get("ok")]
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

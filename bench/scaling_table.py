"""The figures table of docs/scaling.md, rewritten from a bench report.

Figures go stale with every change of code or machine, so docs/scaling.md keeps its prose free of
them and holds one table between two marker comments; ``make bench`` (bench/run_all.py) rewrites
that table from the report it has just written. A bench that failed or did not run shows a dash,
never an older figure.

    .venv/bin/python bench/scaling_table.py [REPORT] [--doc docs/scaling.md]

rewrites the table from an existing report (default test-artifacts/bench/report.json).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "scaling.md"
REPORT = ROOT / "test-artifacts" / "bench" / "report.json"
START = "<!-- bench-table:start (make bench rewrites what follows, up to bench-table:end) -->"
END = "<!-- bench-table:end -->"
DASH = "—"
LOOKUPS = {
    "commit_prefix": "`?commit=` 10-hex prefix",
    "q_one_row": "`?q=` word in 1 row",
    "q_2_percent": "`?q=` twenty words, together in 2 % of rows",
    "q_10_percent": "`?q=` word in 10 % of rows",
    "files_one_row": "`?files=` path in 1 row",
    "list_newest": "list, newest first",
    "list_branch": "list `?branch=`",
    "context_by_branch": "context digest by branch",
}

Row = tuple[str, str, str, str]  # bench, what, figure, against its floor


def table(report: dict[str, Any]) -> str:
    """The Markdown table of a run_all report, with a line saying when and on what it was made."""
    machine, after = report.get("machine_before", {}), report.get("machine_after", {})
    lines = [
        f"Made by `make bench` at {report.get('generated_at', DASH)} on {machine.get('cpus', DASH)} cores; "
        f"load average {_load(machine)} before, {_load(after)} after.",
        "",
        "| bench | what | figure | against its floor |",
        "|---|---|---|---|",
    ]
    rows = [*_client_rows(report), *_worker_rows(report), *_web_rows(report), *_scale_rows(report)]
    rows += _capacity_rows(report)
    lines += ["| " + " | ".join(_cell(text) for text in row) + " |" for row in rows]
    return "\n".join(lines)


def rewrite(text: str, new_table: str) -> str:
    """``text`` with whatever stands between the markers replaced by ``new_table``."""
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start or text.count(START) != 1 or text.count(END) != 1:
        raise ValueError("the document needs one bench-table start marker followed by one end marker")
    return f"{text[: start + len(START)]}\n{new_table}\n{text[end:]}"


def update_doc(report: dict[str, Any], doc: Path = DOC) -> None:
    doc.write_text(rewrite(doc.read_text(), table(report)))


HOOKS = {  # bench_hook's key prefix → what it times
    "hook_noop": "tool hook (PostToolUse), nothing to capture",
    "hook_commit": "tool hook after a {mb} MB turn",
    "post_commit_noop": "git post-commit hook, no active session",
    "post_commit_capture": "git post-commit hook after a {mb} MB turn",
}


def _client_rows(report: dict[str, Any]) -> Iterator[Row]:
    parse = _result(report, "parse")
    yield (
        "parse",
        f"parse a {_mb(parse.get('bytes'))} MB transcript",
        _unit(parse.get("mb_per_s"), "MB/s"),
        _times(parse.get("ratio"), "gunzip + `json.loads`"),
    )
    redact = _result(report, "redact").get("throughput", {})
    yield "redact", "redact before upload", _unit(redact.get("mb_per_s"), "MB/s"), DASH
    hook = _result(report, "hook")
    mb = _or_dash(hook.get("hook_commit_delta_mb"))
    for key, what in HOOKS.items():
        figure, ratio = _unit(hook.get(f"{key}_ms"), "ms"), _times(hook.get(f"{key}_ratio"), "`python -c pass`")
        yield "hook", what.format(mb=mb), figure, ratio
    why = _result(report, "why")
    yield (
        "why",
        "`sessionledger why`, the whole command",
        _unit(why.get("why_cli", {}).get("median_ms"), "ms"),
        f"`python -c pass`: {_unit(why.get('python_start', {}).get('median_ms'), 'ms')}",
    )


def _worker_rows(report: dict[str, Any]) -> Iterator[Row]:
    processing = _result(report, "ingest").get("processing", {})
    yield (
        "ingest",
        "worker's derive step (gunzip, parse, document, gzip)",
        _unit(processing.get("mb_per_s"), "MB/s"),
        _times(processing.get("ratio"), "gunzip + `json.loads`"),
    )
    worker = _result(report, "worker")
    for name, figures in worker.get("small", {}).items():
        yield (
            "worker",
            f"whole task, real segment `{name}`",
            _p50_p95(figures.get("task_ms"), figures.get("task_p95_ms")),
            _times(figures.get("ratio_task_io"), "io floor"),
        )
    commit = worker.get("commit_wait", {})
    if commit:
        yield (
            "worker",
            "a small commit waiting for the WAL flush, and with `lazy_commit`",
            f"{_unit(commit.get('durable_ms'), 'ms')} / {_unit(commit.get('lazy_ms'), 'ms')}",
            DASH,
        )
    for figures in (f for name, f in worker.items() if name not in ("small", "commit_wait")):
        yield (
            "worker",
            f"`process_session`, {_mb(figures.get('raw_bytes'))} MB session",
            _p50_p95(_ms(figures.get("median_s")), _ms(figures.get("p95_s"))),
            DASH,
        )
    load = _result(report, "load")
    yield (
        "load",
        _load_what(load),
        (
            f"{_unit(load.get('accepted_per_s'), 'accepted/s')}, {_unit(load.get('processed_per_s'), 'processed/s')}; "
            f"upload {_p50_p95(load.get('p50_ms'), load.get('p95_ms'))}"
        ),
        f"backlog drained {_unit(load.get('drain_after_load_s'), 's')} after the load",
    )


def _web_rows(report: dict[str, Any]) -> Iterator[Row]:
    ingest, api = _result(report, "ingest").get("ingest_10mib", {}), _result(report, "api_overhead")
    yield "ingest", "upload of a 10 MiB transcript (in-process), p50", _unit(_ms(ingest.get("p50_s")), "ms"), DASH
    yield (
        "api_overhead",
        f"API list, {_count(api.get('rows'))} rows",
        _p50_p95(api.get("api_list_newest", {}).get("median_ms"), api.get("api_list_newest", {}).get("p95_ms")),
        _times(api.get("ratio_p95"), "its bare SQL, p95"),
    )
    for name in ("newest", "branch", "commit"):
        lookup = api.get(name, {})
        if lookup:
            yield (
                "api_overhead",
                f"API lookup `{name}`, {_count(api.get('rows'))} rows",
                _p50_p95(lookup.get("api", {}).get("median_ms"), lookup.get("api", {}).get("p95_ms")),
                _times(lookup.get("ratio_to_floor_median"), "framework floor, p50"),
            )
    for size, figures in _result(report, "ingest").get("ingest_floor", {}).items():
        rate = _unit(figures.get("uploads_per_s_per_core"), "uploads/s")
        yield (
            "ingest",
            f"upload of a {size} segment (in-process), p50",
            f"{_unit(figures.get('api_p50_ms'), 'ms')}; {rate} per core",
            _times(figures.get("ratio"), "ingest floor"),
        )
    page = _result(report, "session_page").get("session", {})
    first, cached = page.get("page_first", {}), page.get("page_first", {}).get("cached", {})
    for what, figures in (
        (f"session page 1 ({_or_dash(page.get('messages'))} messages), first reader", page.get("first_reader", {})),
        ("the same page, a later reader (cached)", cached),
        ("the same page rendered (page cache off)", first),
    ):
        yield (
            "session_page",
            what,
            _unit(figures.get("median_ms"), "ms"),
            _times(figures.get("ratio_to_read_decode"), "read + decode"),
        )
    yield (
        "session_page",
        "a one-turn session's page",
        _unit(page.get("page_tiny_session", {}).get("median_ms"), "ms"),
        DASH,
    )
    insights = _result(report, "insights")
    yield (
        "insights",
        f"insights page, {_count(insights.get('sessions'))} sessions",
        _unit(insights.get("page_all_time", {}).get("median_ms"), "ms"),
        f"target {_unit(insights.get('target_ms'), 'ms')}",
    )


def _scale_rows(report: dict[str, Any]) -> Iterator[Row]:
    for size, at_size in _result(report, "scale").get("sizes", {}).items():
        rows = at_size.get("rows", {})
        for name, label in LOOKUPS.items():
            figures = rows.get(name, {})
            query, api = figures.get("query", {}), figures.get("api", {})
            yield (
                "scale",
                f"{label}, {_count(int(size))} sessions",
                (
                    f"SQL {_p50_p95(query.get('p50_ms'), query.get('p95_ms'))}; "
                    f"API {_p50_p95(api.get('p50_ms'), api.get('p95_ms'))}"
                ),
                _scale_ratio(figures),
            )


def _capacity_rows(report: dict[str, Any]) -> Iterator[Row]:
    capacity = report.get("capacity", {})
    measured = capacity.get("worker_measured", {})
    yield (
        "capacity",
        f"sessions a day per worker core ({_mb(measured.get('session_raw_bytes'))} MB each)",
        (
            f"{_count(measured.get('sessions_per_day_per_core'))} at full use, "
            f"{_count(measured.get('at_50_percent_utilisation'))} at half"
        ),
        DASH,
    )
    storage = capacity.get("storage_per_developer_month", {})
    yield (
        "capacity",
        "storage per developer per month",
        (f"bucket {_unit(storage.get('bucket_mb'), 'MB')}, PostgreSQL {_unit(storage.get('postgres_mb'), 'MB')}"),
        DASH,
    )
    ratios = report.get("storage", {}).get("realistic", {})
    yield (
        "storage",
        "stored bytes per transcript byte",
        (
            f"raw blob {_or_dash(ratios.get('raw_gzip_ratio'))}, "
            f"content blob {_or_dash(ratios.get('content_gzip_ratio'))}"
        ),
        DASH,
    )


def _result(report: dict[str, Any], name: str) -> dict[str, Any]:
    """A bench's figures, or nothing when it failed or did not run."""
    entry = report.get("benches", {}).get(name, {})
    result = entry.get("result") if entry.get("ok") else None
    return result if isinstance(result, dict) else {}


def _scale_ratio(figures: dict[str, Any]) -> str:
    ratio = _times(figures.get("query_ratio"), "ids-only floor, p95")
    if "query_ratio_columns" in figures:
        ratio += f"; {_times(figures['query_ratio_columns'], 'with the columns')}"
    return ratio


def _load_what(load: dict[str, Any]) -> str:
    return (
        f"{_or_dash(load.get('uploaders'))} uploaders, {_or_dash(load.get('worker_processes'))} worker processes, "
        f"everything on this machine"
    )


def _load(machine: dict[str, Any]) -> str:
    return " ".join(str(x) for x in machine.get("loadavg", [])) or DASH


def _or_dash(value: Any) -> str:
    return DASH if value is None else str(value)


def _unit(value: Any, unit: str) -> str:
    return DASH if value is None else f"{_number(value)} {unit}"


def _times(value: Any, floor: str) -> str:
    return DASH if value is None else f"{_number(value)}× {floor}"


def _p50_p95(p50: Any, p95: Any) -> str:
    return DASH if p50 is None else f"{_number(p50)} / {_number(p95)} ms p50 / p95"


def _number(value: Any) -> str:
    """Two or three significant figures: the machine's noise makes any more of them fiction."""
    if value is None:
        return DASH
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:.3g}"
    return f"{value:.2g}"


def _ms(seconds: Any) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


def _mb(size: Any) -> str:
    return DASH if size is None else f"{size / 1e6:.1f}"


def _count(value: Any) -> str:
    return DASH if value is None else f"{value:,}"


def _cell(text: str) -> str:
    """A cell that cannot end early or break the row: a fixture's name may hold ``|`` or a newline."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, nargs="?", default=REPORT)
    parser.add_argument("--doc", type=Path, default=DOC)
    options = parser.parse_args(argv)
    update_doc(json.loads(options.report.read_text()), options.doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

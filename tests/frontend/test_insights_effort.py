"""Insights' effort numbers: tokens, estimated cost from the price table, active and tool time, steps
per commit — computed by the worker into the digest, rolled up by the database, per author/branch/week."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django_scopes import scopes_disabled

from sessionledger.core.formats.facts import effort
from sessions_app import prices
from sessions_app.insights import Period, effort_per_author_week, effort_per_branch
from sessions_app.models import Session
from tests.client.transcript_builder import TranscriptBuilder

pytestmark = pytest.mark.django_db
MONDAY = datetime(2026, 3, 2, 10, tzinfo=UTC)


def _work(prompts: int) -> bytes:
    """Per prompt: 2 tool calls answered 30 s later, 60 s apart; then a 10-minute pause (not active)."""
    b = TranscriptBuilder(start="2026-03-02T09:00:00Z", step_seconds=30)
    for n in range(prompts):
        b.prompt(f"task {n}")
        b.tool_call("Bash", {"command": "make"}, result="ok")
        b.new_response().tool_call("Read", {"file_path": "/a.py"}, result="x")
        b.new_response().assistant_text("done").turn_end()
        b.at(b.clock + timedelta(minutes=10))
    return b.build()


def test_effort_facts_of_a_transcript() -> None:
    from sessionledger.core.formats import parse_transcript

    parsed = parse_transcript(_work(2), agent="claude-code")
    facts = effort(parsed.messages)
    # the builder's usage: 3 input, 12 output, 120 cache writes, 2400 cache reads per API message
    responses = len({m["message_id"] for m in parsed.messages if m.get("message_id")})
    assert facts["tokens"] == {"claude-opus-4-6": [3 * responses, 12 * responses, 120 * responses, 2400 * responses]}
    assert facts["steps"] == 2 + 4  # two prompts, four tool calls
    assert facts["tool_ms"] == 4 * 30_000
    active = [m["timestamp"] for m in parsed.messages if not m.get("sidechain")]
    assert facts["active_ms"] < (len(active)) * 30_000  # the 10-minute pause is not counted
    assert facts["active_ms"] >= 2 * 4 * 30_000


def test_hostile_usage_and_timestamps_do_not_break_the_facts() -> None:
    messages = [
        {"index": 0, "role": "assistant", "kind": "text", "message_id": "m1", "model": "x" * 500,
         "usage": {"input_tokens": 10**40, "output_tokens": "7", "cache_read_input_tokens": True}, "timestamp": "nope"},
        {"index": 1, "role": "assistant", "kind": "tool_use", "tool": {"id": "t"}, "timestamp": "2026-01-01T00:00:00Z"},
        {"index": 2, "role": "tool", "kind": "tool_result", "tool": {"id": "t"}, "timestamp": "2027-01-01T00:00:00Z"},
    ]  # fmt: skip
    facts = effort(messages)
    assert facts["tokens"] == {"x" * 64: [10**12, 0, 0, 0]}
    assert facts["tool_ms"] == 3600 * 1000 and facts["active_ms"] == 0


def _session(world, ingest, author, prompts: int, when: datetime, **metadata) -> Session:
    session = ingest(world.project, author, raw=_work(prompts), seed=f"effort-{author.pk}-{when}", **metadata)
    with scopes_disabled():  # insights weeks go by when the conversation happened (captured_at)
        Session.objects.filter(pk=session.pk).update(created_at=when, captured_at=when)
    return session


def test_cost_time_and_steps_per_author_week_and_branch(world, ingest, settings) -> None:
    settings.SESSIONLEDGER_MODEL_PRICES = '{"claude-opus-4": [10, 100, 1, 0.1]}'
    prices.table.cache_clear()
    try:
        _session(world, ingest, world.admin, 2, MONDAY, feature_branch="feat/a")
        _session(world, ingest, world.admin, 1, MONDAY + timedelta(days=1), feature_branch="feat/b")
        _session(world, ingest, world.member, 1, MONDAY + timedelta(days=7), feature_branch="feat/a")
        with scopes_disabled():
            weeks = effort_per_author_week(world.project, Period())
            branches = effort_per_branch(world.project, Period())
    finally:
        prices.table.cache_clear()
    by = {(r["week"], r["author"]): r for r in weeks}
    admin = by[("2026-03-02", world.admin.email)]
    assert admin["sessions"] == 2 and admin["commits"] == 2 and admin["steps"] == (2 + 4) + (1 + 2)
    assert admin["steps_per_commit"] == 4.5 and admin["tool_minutes"] == 3  # 6 calls × 30 s
    responses = admin["output_tokens"] // 12
    expected = responses * (3 * 10 + 12 * 100 + 120 * 1 + 2400 * 0.1) / 1_000_000
    assert admin["cost_usd"] == round(expected, 2) and admin["input_tokens"] == 3 * responses
    assert by[("2026-03-09", world.member.email)]["sessions"] == 1
    assert [r["branch"] for r in branches][:2] == ["feat/a", "feat/b"]
    assert branches[0]["sessions"] == 2 and branches[0]["commits"] == 2


def test_a_malformed_price_table_falls_back_to_the_defaults(settings) -> None:
    settings.SESSIONLEDGER_MODEL_PRICES = '{"claude-opus-4": "free"}'
    prices.table.cache_clear()
    try:
        assert prices.price_for("claude-opus-4-6") == (5.0, 25.0, 6.25, 0.5)  # the longest default prefix
        assert prices.cost("unknown-model", input_tokens=10**6) == 0.0
    finally:
        prices.table.cache_clear()


def test_the_insights_page_shows_cost_and_time(world, ingest, client) -> None:
    _session(world, ingest, world.admin, 2, MONDAY, feature_branch="feat/a")
    client.force_login(world.viewer)
    page = client.get(f"/p/{world.project.slug}/insights").content.decode()
    assert 'id="effort_per_author_week"' in page and 'id="effort_per_branch"' in page
    assert "Estimated cost" in page and "steps/commit" in page


@pytest.mark.parametrize("model", ["gpt-5", "gpt-5-codex", "gpt-5-2025-08-07", "openai/gpt-5-codex", "GPT-5"])
def test_codex_model_names_find_the_gpt_5_price(model) -> None:
    assert prices.price_for(model) == tuple(float(x) for x in prices.DEFAULT_PRICES["gpt-5"])


def test_a_model_without_a_price_reads_unpriced_never_zero_dollars(world, ingest, client) -> None:
    b = TranscriptBuilder(start="2026-03-02T09:00:00Z", model="gemini-2.5-pro")
    b.prompt("go").assistant_text("done")
    session = ingest(world.project, world.admin, raw=b.build(), seed="unpriced")
    with scopes_disabled():
        Session.objects.filter(pk=session.pk).update(captured_at=MONDAY)
        [row] = effort_per_author_week(world.project, Period())
    assert row["cost_usd"] == 0 and row["unpriced_tokens"] == 3 + 12 + 120 + 2400  # the builder's one response
    client.force_login(world.viewer)
    page = client.get(f"/p/{world.project.slug}/insights").content.decode()
    assert "unpriced" in page and "$0.00" not in page

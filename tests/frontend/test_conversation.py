"""Grouping a content document into cards, and cutting it into pages."""

from __future__ import annotations

from frontend.session_page.conversation import build_cards, paginate
from sessionledger.core.formats import parse_transcript
from tests.client.transcript_builder import TranscriptBuilder
from tests.frontend.conftest import long_transcript, rich_transcript


def _messages(raw: bytes, subagents: dict[str, bytes] | None = None) -> list[dict]:
    return parse_transcript(raw, subagents=subagents).messages


def test_lines_of_one_api_response_form_one_card_with_results_attached() -> None:
    raw, subagents = rich_transcript()
    cards = build_cards(_messages(raw, subagents))
    response = next(c for c in cards if c.kind == "response")
    kinds = [item.message["kind"] for item in response.items]
    assert kinds == ["thinking", "text", "tool_use", "tool_use"]
    assert [item.result["content"] for item in response.items[2:]] == ["def main(): ...", "cli.py:1"]
    ids = {item.message.get("message_id") for item in response.items}
    assert len(ids) == 1


def test_sub_agent_messages_sit_under_the_task_call_that_spawned_them() -> None:
    raw, subagents = rich_transcript()
    cards = build_cards(_messages(raw, subagents))
    task = next(item for c in cards for item in c.items if (item.message.get("tool") or {}).get("name") == "Task")
    nested = [item.message for card in task.children for item in card.items]
    assert nested and all(m.get("sidechain") for m in nested)
    assert not any(item.message.get("sidechain") for c in cards for item in c.items)


def test_sub_agent_messages_stand_alone_when_their_call_is_filtered_out() -> None:
    raw, subagents = rich_transcript()
    sidechain = [m for m in _messages(raw, subagents) if m.get("sidechain")]
    cards = build_cards(sidechain)
    assert cards and all(item.message.get("sidechain") for c in cards for item in c.items)


def test_a_result_without_its_call_is_its_own_tool_card() -> None:
    raw, _ = rich_transcript()
    results = [m for m in _messages(raw) if m["kind"] == "tool_result"]
    cards = build_cards(results)
    assert [c.kind for c in cards] == ["tool"] * len(results)


def test_compaction_boundary_and_summary_get_their_own_kinds() -> None:
    raw, _ = rich_transcript()
    kinds = [c.kind for c in build_cards(_messages(raw))]
    assert "compact" in kinds and kinds[kinds.index("compact") + 1] == "summary"


def test_every_message_lands_in_exactly_one_card() -> None:
    raw, subagents = rich_transcript()
    messages = _messages(raw, subagents)
    cards = build_cards(messages)
    indexes = sorted(i for c in cards for i in c.indexes())
    assert indexes == [m["index"] for m in messages]


def test_pages_hold_whole_cards_and_locate_every_turn() -> None:
    parsed = parse_transcript(long_transcript(40))
    paged = paginate(build_cards(parsed.messages), per_page=100)
    assert paged.count > 1
    assert all(sum(c.message_count for c in page) <= 100 for page in paged.pages)
    pages = [paged.locate_turn(turn)[0] for turn in parsed.turns]
    assert pages == sorted(pages) and pages[0] == 1 and pages[-1] == paged.count


def test_a_turn_hidden_by_filters_has_no_location() -> None:
    parsed = parse_transcript(TranscriptBuilder().prompt("one").assistant_text("a").prompt("two").build())
    shown = [m for m in parsed.messages if m["turn"] == 0]
    paged = paginate(build_cards(shown))
    assert paged.locate_turn(parsed.turns[0]) == (1, f"m-{parsed.messages[0]['uuid']}")  # the prompt's card
    assert paged.locate_turn(parsed.turns[1]) is None

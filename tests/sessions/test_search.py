"""Project search finds what people search for: errors from tool output, commands, and shows where.

Tool commands and (bounded) tool outputs are indexed at weight D, below title (A), prompts (B)
and replies (C); a list hit shows the matching sentence, escaped, with the match marked; the list
filters by a file the session touched, in the API and on the page alike.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django_scopes import scopes_disabled

from sessions_app.models import Session
from tests.client.transcript_builder import TranscriptBuilder

FAILURE = (
    "============================= test session starts ==============================\n"
    "collected 12 items\n\n"
    "tests/test_ledger.py ...........F\n\n"
    "E   AssertionError: ledger balance drifted by 0.03 after reconciliation\n"
    "FAILED tests/test_ledger.py::test_reconcile - AssertionError\n"
    'E   ValueError: refused <img src=x onerror="alert(1)"> as a memo, total < 0 & over\n'
    "1 failed, 11 passed in 0.42s"
)


def _tool_session() -> bytes:
    b = TranscriptBuilder()
    b.prompt("Make the ledger tests pass")
    b.tool_call("Bash", {"command": "pytest -q tests/test_ledger.py --maxfail=1"}, result=FAILURE, is_error=True)
    long_output = "x" * 10 + " headword\n" + ("filler line of build output\n" * 20_000) + "middleword\n"
    long_output += ("filler line of build output\n" * 20_000) + "tailword <script>alert(1)</script> ends here\n"
    b.new_response().tool_call("Bash", {"command": "make build"}, result=long_output)
    b.new_response().assistant_text("Fixed the rounding in reconcile().").turn_end()
    return b.build()


@pytest.fixture
def sessions(world, ingest) -> dict[str, Session]:
    return {
        "tools": ingest(
            world.project, world.member, raw=_tool_session(), seed="tools", files_touched=["src/ledger.py"]
        ),
        "plain": ingest(world.project, world.member, "Rename the reconcile helper", seed="plain"),
    }


def _api(api_as, world, **params) -> list[str]:
    response = api_as(world.viewer).get(f"/api/v1/projects/{world.project.slug}/sessions", params)
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]]


def test_an_error_from_a_test_run_and_a_command_find_the_session(world, api_as, sessions) -> None:
    tools = str(sessions["tools"].pk)
    assert _api(api_as, world, q='"ledger balance drifted"') == [tools]
    assert _api(api_as, world, q="test_reconcile") == [tools]
    assert _api(api_as, world, q="maxfail") == [tools]  # the command
    assert _api(api_as, world, q="headword") == [tools]  # an output's first part …
    assert _api(api_as, world, q="tailword") == [tools]  # … and its last
    assert _api(api_as, world, q="middleword") == []  # bounded: the middle of a 1 MB output is not indexed


def test_tool_text_is_weighted_below_prompts(world, sessions) -> None:
    with scopes_disabled(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT search_vector @@ to_tsquery('english', 'drift:D'),"
            " search_vector @@ to_tsquery('english', 'drift:ABC'),"
            " search_vector @@ to_tsquery('english', 'ledger:B') FROM sessions_app_session WHERE id = %s",
            [sessions["tools"].pk],
        )
        assert cursor.fetchone() == (True, False, True)


def test_a_hit_shows_the_matching_sentence_escaped_and_marked(client, world, sessions) -> None:
    client.force_login(world.viewer)
    response = client.get(f"/p/{world.project.slug}/", {"q": "drifted"})
    [row] = response.context["page"].items
    assert row.pk == sessions["tools"].pk
    page = response.content.decode()
    assert "ledger balance <mark>drifted</mark> by 0.03 after reconciliation" in page
    assert "collected 12 items" not in page  # the sentence, not the whole output
    page = client.get(f"/p/{world.project.slug}/", {"q": "memo"}).content.decode()
    assert "<mark>memo</mark>, total &lt; 0 &amp; over" in page  # escaped, then marked
    assert "<img" not in page


def test_the_list_filters_by_a_file_touched(client, world, api_as, sessions) -> None:
    assert _api(api_as, world, files="src/ledger.py") == [str(sessions["tools"].pk)]
    both = _api(api_as, world, files=["src/ledger.py", "src/capture.py"])
    assert sorted(both) == sorted(str(s.pk) for s in sessions.values())  # the other one touched src/capture.py
    assert _api(api_as, world, files="src/nowhere.py") == []
    client.force_login(world.viewer)
    response = client.get(f"/p/{world.project.slug}/", {"files": "src/ledger.py"})
    assert [s.pk for s in response.context["page"].items] == [sessions["tools"].pk]
    assert 'value="src/ledger.py"' in response.content.decode()

"""Long output: the file is named, Claude's `     5→` prefixes become real line numbers, code is
highlighted, and output past the inline limit opens in a full-width viewer."""

from __future__ import annotations

import re

import pytest

from frontend.session_page.tools import RESULT_LIMIT, numbered_lines
from tests.client.transcript_builder import TranscriptBuilder

pytestmark = pytest.mark.django_db


def _read_output(first: int, count: int) -> str:
    return "\n".join(f"{n:>6}\u2192def f_{n}(x):  # line {n}" for n in range(first, first + count))


@pytest.fixture
def session(world, make_session):
    b = TranscriptBuilder(start="2026-02-10T09:00:00Z")
    b.prompt("Read the retry module")
    b.tool_call("Read", {"file_path": "/work/app/retry.py", "offset": 40}, result=_read_output(40, 3))
    b.new_response().tool_call("Read", {"file_path": "/work/app/big.py"}, result=_read_output(1, 1200))
    b.new_response().tool_call("Bash", {"command": "pytest -q tests/test_retry.py"}, result="x" * 30_000)
    b.new_response().assistant_text("Read.").turn_end()
    return make_session(world.project, world.member, b.build(), seed="long-output")


def _get(client, world, path: str) -> str:
    client.force_login(world.viewer)
    response = client.get(path)
    assert response.status_code == 200
    return response.content.decode()


def test_a_read_output_shows_real_line_numbers_highlighted_under_the_file_name(client, world, session) -> None:
    html = _get(client, world, f"/p/{world.project.slug}/s/{session.pk}").split('id="cards"')[1]
    assert '<pre class="ln" aria-hidden="true">40\n41\n42</pre>' in html
    assert "\u2192" not in html  # the prefixes are gone from the code
    assert re.search(r"<pre class=\"hl\"><span class=\"k\">def</span>.*?f_40", html)
    assert '<span class="result-of">retry.py · lines 40–42</span>' in html
    assert '<span class="result-of">pytest -q tests/test_retry.py</span>' in html


def test_output_past_the_inline_limit_opens_in_the_full_width_viewer(client, world, session) -> None:
    html = _get(client, world, f"/p/{world.project.slug}/s/{session.pk}")
    links = re.findall(r'<a href="(/p/[^"]+/m/(\d+))">([\d,]+) more characters — open in the full-width viewer', html)
    assert [count for _, _, count in links] == [
        f"{len(_read_output(1, 1200)) - RESULT_LIMIT:,}",
        f"{30_000 - RESULT_LIMIT:,}",
    ]
    viewer = _get(client, world, links[0][0])
    assert '<main id="main" class="container full"' in viewer
    assert "<h1>Read result · big.py · lines 1–1200</h1>" in viewer and "/work/app/big.py" in viewer
    gutter = re.search(r'<pre class="ln" aria-hidden="true">([^<]*)</pre>', viewer).group(1)
    assert gutter.split("\n") == [str(n) for n in range(1, 1201)]
    assert f'?at={links[0][1]}#m-{links[0][1]}"' in viewer  # back to the page holding it
    bash = _get(client, world, links[1][0])
    assert "<h1>Bash result · pytest -q tests/test_retry.py</h1>" in bash


def test_line_number_parsing_is_strict_and_linear() -> None:
    assert numbered_lines("no numbers here") is None
    parsed = numbered_lines("     1\u2192a\n     2\u2192b\n\n<system-reminder>note</system-reminder>")
    assert parsed.numbers == ["1", "2"] and parsed.code == "a\nb" and parsed.rest.startswith("<system-reminder>")
    assert numbered_lines(" " * 100 + "1\u2192x") is None  # a prefix is at most a few spaces and digits
    hostile = "1\u2192" + "\u2192" * 200_000
    assert numbered_lines(hostile).code == "\u2192" * 200_000

"""``/p/{project}/s/{id}``: the conversation, its filters (server-side), pages, turns and details."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django_scopes import scopes_disabled

from frontend import stylesheets
from sessions_app.models import AccessLog, CommitLink, Session
from tests.client.transcript_builder import TranscriptBuilder
from tests.frontend.conftest import XSS_PAYLOADS, long_transcript, rich_transcript, xss_transcript
from tests.frontend.test_whole_conversation import _upload
from tests.integrations.records import pull_request

pytestmark = pytest.mark.django_db

STATIC = Path(__file__).resolve().parents[2] / "frontend" / "static" / "frontend"


def _page(client, world, session: Session, query: str = "", user=None) -> str:
    client.force_login(user or world.viewer)
    response = client.get(f"/p/{world.project.slug}/s/{session.pk}{query}")
    assert response.status_code == 200, response.status_code
    return response.content.decode()


class Cards(HTMLParser):
    """The text of each ``<article>`` card (its header excluded) and the classes of every element."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.cards: list[str] = []
        self.depth = 0
        self.in_head = 0
        self.elements: list[tuple[str, dict]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        attributes = dict(attrs)
        self.elements.append((tag, attributes))
        if tag == "article":
            self.depth += 1
            self.cards.append("")
        elif tag == "header" and self.depth:
            self.in_head += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "article":
            self.depth -= 1
        elif tag == "header" and self.in_head:
            self.in_head -= 1

    def handle_data(self, data: str) -> None:
        if self.depth and not self.in_head:
            self.cards[-1] += data


def test_the_conversation_reads_with_roles_tools_and_thinking(client, world, rich_session) -> None:
    html = _page(client, world, rich_session)
    assert html.count('class="card prompt"') == 2
    assert "<strong>--verbose</strong>" in html  # the prompt's Markdown
    assert '<span class="nf">add_argument</span>' in html or '<span class="n">parser</span>' in html  # Pygments
    thinking = re.search(r'<details class="thinking"( open)?>', html)
    assert thinking and not thinking.group(1)  # thinking is folded away by default
    assert re.search(r'<span class="tool-name">Bash</span><code class="tool-summary">pytest -q</code>', html)
    assert '<span class="tool-name">Edit</span><code class="tool-summary">/work/app/cli.py</code>' in html


def test_lines_of_one_response_are_one_card(client, world, rich_session) -> None:
    cards = Cards(_page(client, world, rich_session)).cards
    first_reply = next(c for c in cards if "I'll look at the CLI first." in c)
    assert (
        "The flag belongs in cli.py" in first_reply and "/work/app/cli.py" in first_reply and "argparse" in first_reply
    )


def test_no_card_is_empty(client, world, rich_session) -> None:
    assert all(text.strip() for text in Cards(_page(client, world, rich_session)).cards)


def test_a_tool_result_sits_inside_its_call_and_failures_are_marked(client, world, rich_session) -> None:
    html = _page(client, world, rich_session)
    bash = html[html.index('<details class="tool is-error">') :]
    bash = bash[: bash.index("</details>")]
    assert "pytest -q" in bash and "1 failed, 11 passed" in bash and "Run the tests" in bash


def test_sub_agent_work_is_grouped_under_the_task_call(client, world, rich_session) -> None:
    html = _page(client, world, rich_session)
    task = html[html.index('<span class="tool-name">Task</span>') :]
    # the prompt is shown once (folded, from the call), then the sub-agent's work, folded too
    assert task.index("Prompt to the sub-agent") < task.index('class="subagent"') < task.index("Sub-agent</span>")
    assert "Sub-agent conversation · 4 messages" in task and "Prompt to sub-agent<" not in task
    assert "agentId: a2898e3" not in html  # the resume trailer is noise to a reader


def test_compaction_is_shown_as_a_boundary(client, world, rich_session) -> None:
    html = _page(client, world, rich_session)
    assert 'class="divider" role="separator"' in html and "Conversation compacted (manual" in html
    assert "Summary carried over" in html


def test_role_filter_hides_the_assistant_server_side(client, world, rich_session) -> None:
    html = _page(client, world, rich_session, "?role=user&role=tool&role=system")
    assert 'class="card response' not in html and "I&#x27;ll look at the CLI first." not in html
    assert 'class="card prompt"' in html and 'class="card tool-only"' in html  # results stand on their own
    assert 'value="assistant">' in html and 'value="user" checked>' in html


def test_role_filter_can_show_only_thinking(client, world, rich_session) -> None:
    html = _page(client, world, rich_session, "?role=thinking")
    assert "The flag belongs in cli.py" in html and 'class="card prompt"' not in html
    assert "1 of 24 messages match" in html


def test_time_range_narrows_the_messages(client, world, rich_session) -> None:
    second_prompt = next(t for t in _turn_times(rich_session))
    html = _page(client, world, rich_session, f"?since={second_prompt}")
    assert "Now update the README" in html and "Add a <strong>--verbose</strong>" not in html
    html = _page(client, world, rich_session, f"?until={second_prompt.replace('21:00:19', '21:00:02')}")
    assert "Add a <strong>--verbose</strong>" in html and "Now update the README" not in html.split('id="cards"')[1]


def _turn_times(session: Session) -> list[str]:
    return ["2026-02-10T21:00:19"]  # rich_transcript: the second prompt's timestamp (UTC)


def test_time_range_accepts_zones_and_keeps_the_inputs_filled(client, world, rich_session) -> None:
    html = _page(client, world, rich_session, "?since=2026-02-10T22:00:19%2B01:00")
    assert 'name="since" value="2026-02-10T21:00:19"' in html and "Now update the README" in html


def test_a_bad_time_is_explained_not_a_crash(client, world, rich_session) -> None:
    html = _page(client, world, rich_session, "?since=yesterday")
    assert "Use a date" in html and "24 messages" in html


def test_find_in_session_filters_and_highlights(client, world, rich_session) -> None:
    html = _page(client, world, rich_session, "?q=readme")
    assert "<mark>README</mark>" in html and 'class="card prompt"' in html
    assert "I&#x27;ll look at the CLI first." not in html


def test_turn_navigation_lists_every_prompt(client, world, rich_session) -> None:
    html = _page(client, world, rich_session)
    nav = html[html.index('id="turn-nav"') : html.index("</ol>", html.index('id="turn-nav"'))]
    assert nav.count("<li>") == 2 and "Now update the README" in nav
    anchor = re.findall(r'data-anchor="(m-[0-9a-f-]+)"', nav)[1]
    assert f'id="{anchor}"' in html and 'id="turn-2"' in html


def test_a_long_session_is_served_in_pages_with_turn_links_across_them(client, world, make_session) -> None:
    session = make_session(world.project, world.member, long_transcript(60), seed="long")
    assert session.message_count == 600
    first = _page(client, world, session)
    assert first.count('class="card prompt"') < 60 and "page 1 of" in first
    assert re.search(r'href="\?page=2" rel="next" data-more', first)
    last_turn = re.findall(r'href="\?page=(\d+)#(m-[0-9a-f-]+)"', first)[-1]
    later = _page(client, world, session, f"?page={last_turn[0]}")
    assert f'id="{last_turn[1]}"' in later and "Turn 60: please change module_60.py" in later
    assert len(later) < 400_000


def test_page_links_keep_the_filters(client, world, make_session) -> None:
    session = make_session(world.project, world.member, long_transcript(60), seed="long")
    html = _page(client, world, session, "?role=user&role=assistant&role=thinking")
    assert re.search(r'href="\?role=user&amp;role=assistant&amp;role=thinking&amp;page=2"', html)


def test_details_panel_shows_commit_branch_diff_files_and_redactions(client, world, rich_session) -> None:
    html = _page(client, world, rich_session)
    panel = html[html.index('class="panel details-panel"') :]
    for text in (
        rich_session.commit_hash[:12],
        "Add session capture",
        "010-session-capture",
        "mallory@example.com",
        "+30",
        "−4",
        "in 2 files",
        "github_token × 1",
        "/work/app/cli.py",
        "claude-code 2.1.39",
    ):
        assert text in panel, text
    assert f'href="/p/acme-api/s/{rich_session.pk}/raw"' in html


def test_copy_link_and_markdown_snippet_for_pull_requests(client, world, rich_session) -> None:
    html = _page(client, world, rich_session)
    url = f"http://testserver/p/acme-api/s/{rich_session.pk}"
    assert f'data-copy="{url}"' in html
    # a checkpoint's Markdown links its commit permalink (tests/frontend/test_headline.py)
    commit_url = f"http://testserver/p/acme-api/c/{rich_session.commit_hash}"
    assert f"Add session capture ({rich_session.commit_hash[:12]})]({commit_url})" in html


def test_details_name_each_pull_request_holding_the_commit_once_rebased_or_not(client, world, rich_session) -> None:
    sha, rebased = rich_session.commit_hash, "f" * 40
    with scopes_disabled():
        CommitLink.objects.create(project=world.project, old_hash=sha, new_hash=rebased)
        CommitLink.objects.create(project=world.other_project, old_hash=sha, new_hash="e" * 40)
    pull_request(world.project, number=7, commits=[sha])  # holds the commit
    pull_request(world.project, number=9, commits=[sha, rebased])  # holds it and its rebased copy
    pull_request(world.project, number=11, commits=[rebased])  # holds only the rebased copy
    pull_request(world.project, number=13, commits=["d" * 40])  # another commit
    pull_request(world.other_project, number=15, commits=[sha, "e" * 40])  # another project's
    html = _page(client, world, rich_session)
    shown = re.findall(r'href="/p/acme-api/pr/(\d+)"', html)
    assert shown == ["11", "9", "7"]  # newest first, each once


def test_segments_of_one_agent_session_link_to_each_other(client, world, make_session) -> None:
    one = TranscriptBuilder().prompt("first part").assistant_text("ok").turn_end().build()
    two = TranscriptBuilder(start="2026-02-10T22:00:00Z").prompt("second part").assistant_text("ok").build()
    first = make_session(world.project, world.member, one, seed="seg1")
    second = make_session(
        world.project,
        world.member,
        two,
        seed="seg2",
        start_offset=len(one),
        previous_end_offset=len(one),
        end_offset=len(one) + len(two),
    )
    assert f'href="/p/acme-api/s/{first.pk}" rel="prev"' in _page(client, world, second)
    assert f'href="/p/acme-api/s/{second.pk}" rel="next"' in _page(client, world, first)


def test_raw_download_is_the_uploaded_transcript(client, world, rich_session) -> None:
    client.force_login(world.viewer)
    response = client.get(f"/p/{world.project.slug}/s/{rich_session.pk}/raw")
    assert response.status_code == 200 and response["Content-Type"] == "application/gzip"
    assert gzip.decompress(b"".join(response.streaming_content)) == rich_transcript()[0]


def test_a_long_output_is_cut_with_a_link_to_the_whole_message(client, world, make_session) -> None:
    output = "line of output\n" * 3000
    raw = TranscriptBuilder().prompt("run it").tool_call("Bash", {"command": "make"}, result=output).build()
    session = make_session(world.project, world.member, raw, seed="big")
    html = _page(client, world, session)
    link = re.search(r'href="(/p/acme-api/s/[^"]+/m/(\d+))">([\d,]+) more characters', html)
    assert link and len(html) < len(output) + 50_000
    client.force_login(world.viewer)
    full = client.get(link.group(1)).content.decode()
    assert full.count("line of output") == 3000


def test_reading_is_recorded_in_the_access_log(client, world, rich_session) -> None:
    _page(client, world, rich_session)
    with scopes_disabled():
        assert AccessLog.objects.filter(session_id=rich_session.pk, user=world.viewer, via="web").exists()


def test_a_session_being_processed_says_so_and_refreshes(client, world, make_session) -> None:
    session = make_session(world.project, world.member, seed="slow", process=False)
    html = _page(client, world, session)
    assert "Processing…" in html and '<meta http-equiv="refresh" content="5">' in html


def test_hostile_transcripts_render_as_text(client, world, make_session) -> None:
    session = make_session(world.project, world.member, xss_transcript(), seed="xss")
    html = _page(client, world, session)
    elements = Cards(html).elements
    assert [attrs for tag, attrs in elements if tag == "script"] == [{"src": "/static/frontend/app.js", "defer": None}]
    assert not [tag for tag, _ in elements if tag in ("img", "iframe", "object", "embed")]
    assert html.count("<style") == 1 and stylesheets.element() in html  # ours only: the transcript's stayed text
    svgs = [a.get("class") or "" for tag, a in elements if tag == "svg"]
    assert all(c.startswith("icon") or c == "minimap" for c in svgs) and svgs.count("minimap") <= 1
    assert not [name for _, attrs in elements for name in attrs if name.startswith("on")]
    assert not [a["href"] for _, a in elements if (a.get("href") or "").lower().startswith(("javascript", "data"))]
    assert "&lt;script&gt;alert(&#x27;prompt&#x27;)&lt;/script&gt;" in html  # shown, as text
    assert html.count("You wrote:") == len(XSS_PAYLOADS)


def test_pages_carry_a_strict_content_security_policy(client, world, rich_session) -> None:
    client.force_login(world.viewer)
    response = client.get(f"/p/{world.project.slug}/s/{rich_session.pk}")
    policy = dict(part.strip().split(" ", 1) for part in response["Content-Security-Policy"].split(";"))
    assert policy["default-src"] == "'self'" and policy["script-src"] == "'self'"
    assert policy["object-src"] == "'none'" and policy["base-uri"] == "'none'"
    assert policy["frame-ancestors"] == "'none'" and policy["form-action"] == "'self'"
    assert policy["img-src"] == "'self' data:"
    assert "unsafe-inline" not in response["Content-Security-Policy"]
    assert "unsafe-eval" not in response["Content-Security-Policy"]
    assert response["X-Content-Type-Options"] == "nosniff" and response["Referrer-Policy"] == "same-origin"


def test_no_inline_script_or_style_attribute_in_our_pages(client, world, rich_session) -> None:
    html = _page(client, world, rich_session)
    assert not re.search(r"<script(?![^>]*\bsrc=)", html) and " style=" not in html


def test_the_reading_pages_carry_their_stylesheets_allowed_by_digest_alone(client, world, make_session) -> None:
    """In the page, so the first paint waits for no second request; the CSP lets in that text only."""
    segment = _upload(world, make_session)[-1]
    client.force_login(world.viewer)
    for url in (f"/p/{world.project.slug}/s/{segment.pk}", f"/p/{world.project.slug}/s/{segment.pk}/conversation"):
        response = client.get(url)
        html = response.content.decode()
        inline = re.findall(r"<style>(.*?)</style>", html, re.S)
        assert response.status_code == 200 and 'rel="stylesheet"' not in html, url
        assert inline == [(STATIC / "app.css").read_text() + "\n" + (STATIC / "pygments.css").read_text()], url
        policy = dict(part.strip().split(" ", 1) for part in response["Content-Security-Policy"].split(";"))
        digest = base64.b64encode(hashlib.sha256(inline[0].encode()).digest()).decode()
        assert policy["style-src"] == f"'self' 'sha256-{digest}'", url
    listed = client.get(f"/p/{world.project.slug}/").content.decode()  # other pages link them, as before
    assert "<style" not in listed and "/static/frontend/app.css" in listed


def test_outsider_unknown_and_foreign_sessions_are_404(client, world, rich_session, make_session) -> None:
    foreign = make_session(world.other_project, world.other_admin, seed="foreign")
    client.force_login(world.outsider)
    assert client.get(f"/p/{world.project.slug}/s/{rich_session.pk}").status_code == 404
    client.force_login(world.viewer)
    assert client.get(f"/p/{world.project.slug}/s/{foreign.pk}").status_code == 404
    assert client.get(f"/p/{world.project.slug}/s/{foreign.pk}/raw").status_code == 404
    assert client.get(f"/p/{world.project.slug}/s/{rich_session.pk}/m/9999").status_code == 404


def test_the_session_page_costs_a_fixed_number_of_queries(client, world, make_session) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    small = make_session(world.project, world.member, long_transcript(2), seed="small")
    large = make_session(world.project, world.member, long_transcript(30), seed="large")
    client.force_login(world.viewer)
    counts = []
    for session in (small, large):
        with CaptureQueriesContext(connection) as captured:
            assert client.get(f"/p/{world.project.slug}/s/{session.pk}").status_code == 200
        counts.append(len(captured))
        # nor does it read the columns only search uses: a long session's search text weighs megabytes
        assert not any("search_text" in query["sql"] or "search_vector" in query["sql"] for query in captured)
    # The login session, the user, the memberships; the scope's transaction and settings; the session
    # with its next segment's id in one statement; the pull requests holding its commit; the access log;
    # the scope's end (here a savepoint inside the test's transaction, so a reset of the settings too) —
    # ten, whatever the session's size.
    assert counts[0] == counts[1] == 10


def _codex_line(kind: str, **payload) -> bytes:
    return json.dumps({"timestamp": "2026-03-02T09:00:00.000Z", "type": kind, "payload": payload}).encode() + b"\n"


def test_a_codex_response_card_shows_its_tokens(world, ingest, client) -> None:
    usage = {"input_tokens": 2500, "cached_input_tokens": 2000, "output_tokens": 40}
    raw = (
        _codex_line("session_meta", id="c-1", cwd="/w/app", cli_version="0.130.0")
        + _codex_line("turn_context", model="gpt-5-codex")
        + _codex_line("response_item", type="message", role="user", content=[{"type": "input_text", "text": "hi"}])
        + _codex_line("event_msg", type="user_message", message="hi")
        + _codex_line(
            "response_item", type="message", role="assistant", content=[{"type": "output_text", "text": "yo"}]
        )
        + _codex_line("event_msg", type="token_count", info={"total_token_usage": usage, "last_token_usage": usage})
    )
    session = ingest(world.project, world.admin, raw=raw, seed="codex-tokens", agent="codex", agent_version="0.130.0")
    page = _page(client, world, session)
    # in = 500 uncached + 2,000 cache read; the title spells each count out
    assert '<span class="usage" title="input 500 · cache read 2,000 · output 40 tokens">2.5k in · 40 out</span>' in page

"""The whole conversation of an agent session: its segments on one page, commit boundaries, an overview per prompt."""

from __future__ import annotations

import re
import uuid
from html import unescape

from django.urls import reverse
from django_scopes import scopes_disabled

from sessions_app.models import Session
from tests.client.transcript_builder import TranscriptBuilder
from tests.uploads import commit_hash

AGENT = "7e0f3c2a-5b1d-4c8e-9f60-1a2b3c4d5e6f"
LONG_RESULT = "third-segment output\n" + "line of output\n" * 2000  # longer than a card shows
HOSTILE = "<script>alert('prompt')</script> & <img src=x onerror=alert(1)>"


def _three_segments() -> tuple[bytes, list[int]]:
    """Three prompts of one agent session; a commit after the first two, then the session ends."""
    b = TranscriptBuilder(AGENT, start="2026-03-02T09:00:00Z")
    cuts = []
    b.prompt("Add the CSV parser")
    for n in range(3):
        b.new_response().tool_call("Bash", {"command": f"pytest tests/test_csv_{n}.py"}, result="ok")
    b.new_response().tool_call("Edit", {"file_path": "/w/csv.py", "old_string": "a", "new_string": "b"}, result="ok")
    b.new_response().assistant_text("The parser reads quoted fields now.").turn_end()
    cuts.append(len(b.build()))
    b.prompt(HOSTILE)
    b.tool_call("Edit", {"file_path": "/w/x.py", "old_string": "a", "new_string": "b"}, result="ok")
    b.new_response().tool_call("Edit", {"file_path": "/w/y.py", "old_string": "a", "new_string": "b"}, result="ok")
    b.new_response().assistant_text("Escaped the output, segment two marker.").turn_end()
    cuts.append(len(b.build()))
    b.prompt("Write the changelog entry")
    b.tool_call("Write", {"file_path": "/w/CHANGELOG.md", "content": "x"}, result=LONG_RESULT)
    b.new_response().assistant_text("Changelog written, segment three marker.").turn_end()
    cuts.append(len(b.build()))
    return b.build(), cuts


def _upload(world, make_session):
    raw, cuts = _three_segments()
    bounds = [(0, cuts[0]), (cuts[0], cuts[1]), (cuts[1], cuts[2])]
    specs = [
        ("checkpoint", commit_hash("whole-1"), "Parse quoted CSV fields\n\nBody."),
        ("checkpoint", commit_hash("whole-2"), "Escape <b>report</b> output"),
        ("end", commit_hash("whole-2"), ""),
    ]
    return [
        make_session(
            world.project,
            world.member,
            raw[start:end],
            seed=f"whole{start}",
            kind=kind,
            commit_hash=sha,
            commit_message=message,
            start_offset=start,
            end_offset=end,
            agent_session_id=AGENT,
        )
        for (start, end), (kind, sha, message) in zip(bounds, specs, strict=True)
    ]


def _url(world) -> str:
    """The whole conversation, named by its last segment (any segment names it)."""
    with scopes_disabled():
        last = Session.objects.filter(project=world.project, agent_session_id=AGENT).order_by("start_offset").last()
    assert last is not None
    return reverse("whole-conversation", kwargs={"project": world.project.slug, "session_id": last.pk})


def test_an_outsider_gets_404_for_the_whole_conversation(client, world, make_session) -> None:
    _upload(world, make_session)
    client.force_login(world.outsider)
    assert client.get(_url(world)).status_code == 404
    client.force_login(world.viewer)
    assert client.get(_url(world)).status_code == 200


def test_an_unknown_agent_session_is_404(client, world) -> None:
    client.force_login(world.viewer)
    url = reverse("whole-conversation", kwargs={"project": world.project.slug, "session_id": uuid.uuid4()})
    assert client.get(url).status_code == 404


def test_every_segment_shows_in_order_with_its_commit_boundary(client, world, make_session) -> None:
    sessions = _upload(world, make_session)
    client.force_login(world.viewer)
    html = client.get(_url(world)).content.decode()
    cards = html[html.index('id="cards"') :]
    order = [cards.index(text) for text in ("quoted fields now", "segment two marker", "segment three marker")]
    assert order == sorted(order)
    boundaries = re.findall(r'<div class="segment-boundary" id="segment-(\d)".*?</div>', cards, re.S)
    assert boundaries == ["1", "2", "3"]
    first_end = cards.index('id="segment-1"')
    assert order[0] < first_end < order[1] < cards.index('id="segment-2"') < order[2]
    commit_1 = reverse("commit-link", kwargs={"project": world.project.slug, "sha": sessions[0].commit_hash})
    segment_1 = cards[first_end : cards.index("</div>", first_end)]
    assert f'href="{commit_1}"' in segment_1 and "Parse quoted CSV fields" in segment_1
    assert sessions[0].commit_hash[:7] in segment_1
    segment_3 = cards[cards.index('id="segment-3"') :]
    assert "End of the end segment" in segment_3.split("</div>")[0]
    # anchors stay unique across segments: each message appears once
    anchors = re.findall(r'id="(m-[0-9a-f-]+)"', cards)
    assert anchors and len(anchors) == len(set(anchors))


def test_a_full_message_link_goes_to_its_own_segment(client, world, make_session) -> None:
    sessions = _upload(world, make_session)
    client.force_login(world.viewer)
    html = client.get(_url(world)).content.decode()
    own = reverse("session", kwargs={"project": world.project.slug, "session_id": sessions[2].pk})
    links = re.findall(rf'href="({re.escape(own)}/m/\d+)"', html)
    assert links, "the third segment's long output links its full view on the third segment's page"
    full = client.get(links[0])
    assert full.status_code == 200 and "third-segment output" in full.content.decode()


def test_find_searches_every_segment(client, world, make_session) -> None:
    _upload(world, make_session)
    client.force_login(world.viewer)
    html = client.get(_url(world), {"q": "segment"}).content.decode()
    cards = html[html.index('id="cards"') :]
    assert cards.count("<mark") >= 2
    assert "two marker" in cards and "three marker" in cards and "quoted fields now" not in cards


def test_the_overview_counts_tools_per_prompt_as_a_recount_does(client, world, make_session) -> None:
    sessions = _upload(world, make_session)
    client.force_login(world.viewer)
    html = client.get(_url(world)).content.decode()
    overview = html[html.index('id="prompt-overview"') : html.index("</ol>", html.index('id="prompt-overview"'))]
    entries = overview.split('<li class="prompt-entry">')[1:]
    assert len(entries) == 3
    counts = [
        unescape(re.sub(r"<[^>]+>", "", re.search(r"tool-counts[^>]*>(.*?)</p>", e, re.S).group(1))) for e in entries
    ]
    raw, cuts = _three_segments()
    recount = []
    for start, end in ((0, cuts[0]), (cuts[0], cuts[1]), (cuts[1], cuts[2])):
        chunk = raw[start:end].decode()
        found = {name.lower(): len(re.findall(rf'"name": ?"{name}"', chunk)) for name in ("Bash", "Edit", "Write")}
        recount.append(" · ".join(f"{n} {name}" for name, n in sorted(found.items(), key=lambda p: (-p[1], p[0])) if n))
    assert counts == recount == ["3 bash · 1 edit", "2 edit", "1 write"]
    assert "The parser reads quoted fields now." in entries[0]
    assert sessions[0].commit_hash[:7] in entries[0] and "Parse quoted CSV fields" in entries[0]
    assert sessions[1].commit_hash[:7] in entries[1] and "Escape &lt;b&gt;report&lt;/b&gt; output" in entries[1]
    assert "chip mono" not in entries[2]  # the end segment made no commit


def test_hostile_prompt_text_is_escaped_in_the_overview_and_the_cards(client, world, make_session) -> None:
    _upload(world, make_session)
    client.force_login(world.viewer)
    html = client.get(_url(world)).content.decode()
    assert "<script>alert('prompt')" not in html and "<img src=x onerror" not in html
    overview = html[html.index('id="prompt-overview"') :]
    assert "&lt;script&gt;alert(" in overview.split("</ol>")[0]


def test_the_session_page_links_the_whole_conversation(client, world, make_session) -> None:
    sessions = _upload(world, make_session)
    client.force_login(world.viewer)
    page = client.get(reverse("session", kwargs={"project": world.project.slug, "session_id": sessions[1].pk}))
    whole = reverse("whole-conversation", kwargs={"project": world.project.slug, "session_id": sessions[1].pk})
    assert f'href="{whole}">The whole conversation</a>' in page.content.decode()
    for url in (whole, _url(world)):  # any segment names the same conversation
        html = client.get(url).content.decode()
        assert all(marker in html for marker in ("quoted fields now", "segment two marker", "segment three marker"))

"""Links a teammate cannot forge: a message permalink stays with the session that first uploaded
the message, and the Files view links a range only to this server's message permalinks
(docs/security.md "Records and links a teammate cannot forge")."""

from __future__ import annotations

import json

import pytest
from django_scopes import scopes_disabled

from projects.models import Role
from sessions_app.models import Attribution
from tests.client.transcript_builder import TranscriptBuilder
from tests.factories import make_member
from tests.frontend.test_session_files import PATH, transcript
from tests.sessions.test_attribution_api import record

pytestmark = pytest.mark.django_db


def test_a_teammate_backdating_a_copy_cannot_take_over_a_message_permalink(client, world, make_session) -> None:
    builder = TranscriptBuilder().prompt("Decide the retry policy")
    message = builder.last_uuid
    raw = builder.assistant_text("Three tries.").turn_end().build()
    original = make_session(world.project, world.member, raw, seed="original")
    attacker = make_member(world.project, Role.MEMBER, email="eve@example.com")
    make_session(
        world.project,
        attacker,
        raw,
        seed="copy",
        agent_session_id="9e1f2a3b-0000-4000-8000-000000000002",
        captured_at="2001-01-01T00:00:00Z",
    )
    client.force_login(world.viewer)
    response = client.get(f"/p/{world.project.slug}/m/{message}")
    assert response.status_code == 302
    # the original's page, which offers the copy only as one of the sessions holding the message
    assert response["Location"] == f"/p/{world.project.slug}/s/{original.pk}?at={message}&also=1#m-{message}"


def test_the_files_view_links_no_range_to_another_site(world, ingest, api_as, client) -> None:
    """A record stored before links were checked on input still links nowhere but here; one
    posted now loses the foreign link on the way in."""
    raw, _, _ = transcript()
    session = ingest(world.project, world.member, raw=raw, seed="files-links", files_touched=[PATH])
    hostile = record(vcs={"type": "git", "revision": session.commit_hash})
    hostile["files"][0]["path"] = PATH
    hostile["metadata"]["dev.sessionledger"]["line_counts"] = {PATH: 10}
    hostile["metadata"]["dev.sessionledger"]["line_hashes"] = {}
    for conversation in hostile["files"][0]["conversations"]:
        conversation.pop("dev.sessionledger.step", None)
        conversation["url"] = "javascript:alert(document.cookie)"
        conversation["related"] = [{"type": "prompt", "url": "https://evil.example/phish"}]
    with scopes_disabled():
        Attribution.objects.create(project=world.project, session=session, record=json.loads(json.dumps(hostile)))
    client.force_login(world.viewer)
    page = client.get(f"/p/{world.project.slug}/s/{session.pk}/files").content.decode()
    assert "1–3" in page and "javascript:" not in page and "evil.example" not in page

    url = f"/api/v1/projects/{world.project.slug}/sessions/{session.pk}/attribution"
    assert api_as(world.member).post(url, hostile, format="json").status_code == 201
    served = api_as(world.viewer).get(url).json()
    assert "javascript:" not in json.dumps(served) and "evil.example" not in json.dumps(served)
    page = client.get(f"/p/{world.project.slug}/s/{session.pk}/files").content.decode()
    assert "1–3" in page and "javascript:" not in page and "evil.example" not in page

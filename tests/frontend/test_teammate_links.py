"""Links a teammate cannot forge: the Files view links a range only to this server's message
permalinks (docs/security.md "Records and links a teammate cannot forge")."""

from __future__ import annotations

import json

import pytest
from django_scopes import scopes_disabled

from sessions_app.models import Attribution
from tests.frontend.test_session_files import PATH, transcript
from tests.sessions.test_attribution_api import record

pytestmark = pytest.mark.django_db


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

"""Links for pull-request comments (``c/{sha}``, ``t/{task}``, ``m/{uuid}``) and the branch timeline."""

from __future__ import annotations

import re

import pytest

from tests.client.transcript_builder import TranscriptBuilder
from tests.uploads import commit_hash

pytestmark = pytest.mark.django_db


def _raw(prompt: str) -> bytes:
    return TranscriptBuilder().prompt(prompt).assistant_text("ok").turn_end().build()


def _get(client, world, path: str, user=None):
    client.force_login(user or world.viewer)
    return client.get(f"/p/{world.project.slug}/{path}")


def test_a_commit_prefix_with_one_session_redirects_to_it(client, world, rich_session) -> None:
    for prefix in (rich_session.commit_hash[:7], rich_session.commit_hash, rich_session.commit_hash[:10].upper()):
        response = _get(client, world, f"c/{prefix}")
        assert response.status_code == 302 and response["Location"] == f"/p/acme-api/s/{rich_session.pk}"


def test_a_commit_with_several_sessions_offers_a_short_list(client, world, make_session) -> None:
    sha = commit_hash("shared")
    first = make_session(world.project, world.member, _raw("checkpoint work"), commit_hash=sha)
    second = make_session(world.project, world.member, _raw("cleared later"), commit_hash=sha, kind="clear")
    response = _get(client, world, f"c/{sha[:8]}")
    html = response.content.decode()
    assert response.status_code == 200 and "Sessions for commit" in html
    assert f"/p/acme-api/s/{first.pk}" in html and f"/p/acme-api/s/{second.pk}" in html


def test_a_short_or_unknown_commit_is_404(client, world, rich_session) -> None:
    assert _get(client, world, f"c/{rich_session.commit_hash[:6]}").status_code == 404
    assert _get(client, world, "c/zzzzzzzz").status_code == 404
    missing = _get(client, world, "c/abcdef0")
    assert missing.status_code == 404 and "No session for commit" in missing.content.decode()


def test_a_task_link_redirects_or_lists(client, world, make_session) -> None:
    one = make_session(
        world.project,
        world.member,
        _raw("start SL-7"),
        kind="task",
        task_id="SL-7",
        commit_hash=None,
        status="complete",
    )
    response = _get(client, world, "t/SL-7")
    assert response.status_code == 302 and response["Location"] == f"/p/acme-api/s/{one.pk}"
    make_session(
        world.project,
        world.member,
        _raw("retry SL-7"),
        seed="again",
        kind="task",
        task_id="SL-7",
        commit_hash=None,
        status="abandoned",
    )
    assert "Sessions for task" in _get(client, world, "t/SL-7").content.decode()
    assert _get(client, world, "t/SL-404").status_code == 404


def test_another_projects_commit_is_404(client, world, make_session) -> None:
    foreign = make_session(world.other_project, world.other_admin, _raw("globex"), seed="globex")
    assert _get(client, world, f"c/{foreign.commit_hash[:8]}").status_code == 404
    assert _get(client, world, f"c/{foreign.commit_hash[:8]}", user=world.outsider).status_code == 404


def test_the_branch_timeline_shows_checkpoints_in_order(client, world, make_session) -> None:
    made = [
        make_session(
            world.project,
            world.member,
            _raw(f"step {n}"),
            seed=f"b{n}",
            feature_branch="feature/x",
            commit_message=f"Step {n}",
            diff_stat={"files": 1, "insertions": n, "deletions": 1},
        )
        for n in (1, 2, 3)
    ]
    make_session(world.project, world.member, _raw("elsewhere"), seed="main", feature_branch="main")
    response = _get(client, world, "b/feature/x")
    html = response.content.decode()
    assert response.status_code == 200
    assert html.index("step 1") < html.index("step 2") < html.index("step 3") and "elsewhere" not in html
    assert "+6" in html and "−3" in html and "3 sessions" in html
    assert all(f"/p/acme-api/s/{s.pk}" in html for s in made)


def test_an_unknown_branch_is_404(client, world, rich_session) -> None:
    assert _get(client, world, "b/no/such/branch").status_code == 404


def test_every_message_the_api_returns_names_a_block_on_its_page(client, world, rich_session, api_as) -> None:
    """A tool result, a sub-agent's prompt and report, a compaction summary: none has a link of its
    own, yet ``?at=`` names blocks on the page that hold it (the browser test follows them)."""
    url = f"/api/v1/projects/acme-api/sessions/{rich_session.pk}/messages"
    messages = api_as(world.viewer).get(url, {"limit": 1000}).json()["results"]
    client.force_login(world.viewer)
    for message in (m for m in messages if m.get("uuid")):
        html = client.get(f"/p/acme-api/s/{rich_session.pk}", {"at": message["uuid"]}).content.decode()
        named = re.search(r'id="cards" data-at="([^"]+)"', html)
        assert named and any(f'id="{anchor}"' in html for anchor in named.group(1).split()), message

"""A checkpoint is headed by its commit subject (the first prompt under it); PR Markdown links ``/c/{sha}``."""

from __future__ import annotations

import html as htmllib

import pytest
from django.test import Client

from tests.client.transcript_builder import TranscriptBuilder

pytestmark = pytest.mark.django_db


def _raw() -> bytes:
    return TranscriptBuilder().prompt("please make the flaky retry test deterministic").assistant_text("Done.").build()


def test_a_checkpoint_is_headed_by_its_commit_subject(client, world, make_session) -> None:
    session = make_session(
        world.project, world.member, _raw(), seed="hl", commit_message="Fix flaky retry test\n\nLong body here."
    )
    client.force_login(world.viewer)
    page = client.get(f"/p/{world.project.slug}/s/{session.pk}").content.decode()
    assert "<h1>Fix flaky retry test</h1>" in page
    assert '<p class="subhead">please make the flaky retry test deterministic</p>' in page
    assert "<title>Fix flaky retry test ·" in page
    # the Markdown for a PR links the commit permalink, which survives re-uploads and rebases
    markdown = htmllib.unescape(page.split('id="md-link"')[1].split('value="')[1].split('"')[0])
    assert (
        markdown
        == f"[Fix flaky retry test ({session.commit_hash[:12]})](http://testserver/p/{world.project.slug}/c/{session.commit_hash})"
    )

    listing = client.get(f"/p/{world.project.slug}/").content.decode()
    row = listing.split(f'href="/p/{world.project.slug}/s/{session.pk}"')[1]
    assert row.startswith(">Fix flaky retry test</a>")
    assert "please make the flaky retry test deterministic" in row.split("</td>")[0]


def test_a_task_session_keeps_its_prompt_title_and_session_link(client, world, make_session) -> None:
    session = make_session(
        world.project, world.member, _raw(), seed="task", kind="task", task_id="T-7", commit_hash=None
    )
    client.force_login(world.viewer)
    page = client.get(f"/p/{world.project.slug}/s/{session.pk}").content.decode()
    assert "<h1>please make the flaky retry test deterministic</h1>" in page
    assert 'class="subhead"' not in page
    assert f"/p/{world.project.slug}/s/{session.pk})" in htmllib.unescape(page)


def test_an_end_segment_without_a_prompt_is_named_after_its_branch_not_untitled(client, world, make_session) -> None:
    raw = TranscriptBuilder().assistant_text("Pushed the branch and opened the PR.").build()
    session = make_session(
        world.project, world.member, raw, seed="end", kind="end", feature_branch="fix/retry", commit_message=""
    )
    client.force_login(world.viewer)
    page = client.get(f"/p/{world.project.slug}/s/{session.pk}").content.decode()
    assert "<h1>fix/retry: after the last commit</h1>" in page
    listing = client.get(f"/p/{world.project.slug}/").content.decode()
    assert "(untitled" not in listing and "fix/retry: after the last commit" in listing


def test_the_share_page_carries_the_member_page_headline(client, world, make_session, api_as) -> None:
    session = make_session(
        world.project, world.member, _raw(), seed="share-hl", commit_message="Fix flaky retry test\n\nBody."
    )
    made = api_as(world.member).post(
        f"/api/v1/projects/{world.project.slug}/sessions/{session.pk}/shares", {"days": 1}, format="json"
    )
    token = made.json()["url"].rsplit("/share/", 1)[1]
    page = Client().get(f"/share/{token}").content.decode()
    assert "<h1>Fix flaky retry test</h1>" in page
    assert '<p class="subhead">please make the flaky retry test deterministic</p>' in page
    assert "<title>Fix flaky retry test · shared</title>" in page

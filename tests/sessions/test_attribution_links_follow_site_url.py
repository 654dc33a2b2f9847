"""Attribution records keep message permalinks as paths: a change of SITE_URL (a new domain, or `make run`
on another PORT) leaves every stored link working; answers make them absolute with today's SITE_URL, and
the Files view links relatively."""

from __future__ import annotations

from django_scopes import scopes_disabled

from sessionledger.core import attribution_record
from sessions_app.models import Attribution
from tests.sessions.test_attribution_api import attributed_session, attribution_post, record


def _ai_conversation(data: dict) -> dict:
    [ai] = [c for c in data["files"][0]["conversations"] if c["contributor"]["type"] == "ai"]
    return ai


def test_the_stored_record_holds_paths_not_the_site_url(world, api_as) -> None:
    session = attributed_session(world, api_as)
    assert attribution_post(api_as(world.member), session, record()).status_code == 201
    with scopes_disabled():
        stored = Attribution.objects.get(session=session).record
    ai = _ai_conversation(stored)
    assert ai["url"] == f"/p/{world.project.slug}/m/{attribution_record.step_of(ai)}"
    assert all(r["url"].startswith(f"/p/{world.project.slug}/m/") for r in ai.get("related", []))


def test_after_a_site_url_change_the_api_and_the_files_view_still_link_every_step(world, api_as, client, settings):
    session = attributed_session(world, api_as)
    assert attribution_post(api_as(world.member), session, record()).status_code == 201
    settings.SITE_URL = "https://ledger.example.org"

    served = api_as(world.viewer).get(f"/api/v1/projects/{world.project.slug}/sessions/{session.pk}/attribution")
    ai = _ai_conversation(served.json())
    path = f"/p/{world.project.slug}/m/{attribution_record.step_of(ai)}"
    assert ai["url"] == f"https://ledger.example.org{path}"

    client.force_login(world.viewer)
    page = client.get(f"/p/{world.project.slug}/s/{session.pk}/files").content.decode()
    assert f'href="{path}' in page and "testserver" not in page

"""The session page is rendered once per session, content, filters and page (frontend/session_page/page_cache.py)."""

from __future__ import annotations

import gzip

import pytest
from django_scopes import scopes_disabled

from frontend.session_page import page_cache
from projects.scoping import project_scope
from sessions_app import blobs
from sessions_app.models import AccessLog, Session
from sessions_app.processing import session_reprocess
from sessions_app.signals import session_processed
from tests import caching
from tests.client.transcript_builder import TranscriptBuilder
from tests.frontend.conftest import long_transcript

pytestmark = pytest.mark.django_db


def _get(client, world, session: Session, query: str = "", user=None):
    client.force_login(user or world.viewer)
    return client.get(f"/p/{world.project.slug}/s/{session.pk}{query}")


def test_the_second_read_serves_the_same_html_without_rendering_or_reading_content(
    client, world, rich_session, renders
) -> None:
    first = _get(client, world, rich_session)
    assert first.status_code == 200 and len(renders) == 1
    blobs.delete(rich_session.content_storage_key)  # a second render could not read the content any more
    second = _get(client, world, rich_session)
    assert second.status_code == 200 and len(renders) == 1
    assert _cards(first) == _cards(second)
    with scopes_disabled():  # every read is still in the access log (one row per reader and hour, counted)
        [entry] = AccessLog.objects.filter(session_id=rich_session.pk, via="web")
        assert entry.count == 2


def _cards(response) -> str:
    html = response.content.decode()
    return html[html.index('class="card') : html.rindex("</article>")]


def test_filters_and_pages_are_distinct_pages(client, world, make_session, renders) -> None:
    session = make_session(world.project, world.member, long_transcript(60), seed="long")
    pages = {
        query: _cards(_get(client, world, session, query))
        for query in ("", "?page=2", "?role=user", "?q=module_7", "?role=user&q=module_3")
    }
    assert len(renders) == 5
    assert len(set(pages.values())) == 5
    assert "module_7" in pages["?q=module_7"] and "module_30" not in pages["?q=module_7"]
    for query, cards in pages.items():  # each served again from the cache, unchanged
        assert _cards(_get(client, world, session, query)) == cards
    assert len(renders) == 5


def test_reprocessing_renders_the_new_content(client, world, make_session, renders) -> None:
    session = make_session(world.project, world.member, TranscriptBuilder().prompt("first words").build(), seed="re")
    assert "first words" in _cards(_get(client, world, session))
    blobs.put(session.raw_storage_key, gzip.compress(TranscriptBuilder().prompt("second words").build()))
    with project_scope(world.project):
        session_reprocess(session=Session.objects.get(pk=session.pk))
    cards = _cards(_get(client, world, session))
    assert "second words" in cards and "first words" not in cards
    assert len(renders) == 2


def test_a_cached_page_is_still_refused_to_outsiders_and_other_projects(client, world, rich_session) -> None:
    assert _get(client, world, rich_session).status_code == 200  # now cached
    assert _get(client, world, rich_session, user=world.outsider).status_code == 404
    assert _get(client, world, rich_session, user=world.other_admin).status_code == 404
    client.logout()
    response = client.get(f"/p/{world.project.slug}/s/{rich_session.pk}")
    assert response.status_code == 302 and "/accounts/login" in response["Location"]
    # the session under another project's address is not found either, cached or not
    client.force_login(world.other_admin)
    assert client.get(f"/p/{world.other_project.slug}/s/{rich_session.pk}").status_code == 404


def test_with_the_cache_off_every_read_renders(client, world, rich_session, renders, settings) -> None:
    settings.SESSIONLEDGER_PAGE_CACHE_SECONDS = 0
    _get(client, world, rich_session)
    _get(client, world, rich_session)
    assert len(renders) == 2


def test_another_page_of_a_session_just_read_does_not_read_its_content_again(
    client, world, make_session, renders
) -> None:
    session = make_session(world.project, world.member, long_transcript(60), seed="doc")
    first = _cards(_get(client, world, session))
    blobs.delete(session.content_storage_key)  # what follows can only come from the kept document
    second = _get(client, world, session, "?page=2")
    assert second.status_code == 200 and len(renders) == 2
    assert _cards(second) != first and "module_" in _cards(second)
    assert _get(client, world, session, "?q=module_42").status_code == 200
    assert "module_42" in _cards(_get(client, world, session, "?q=module_42"))


def test_the_worker_renders_the_first_page_so_the_first_reader_does_not(
    client, world, make_session, renders, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):  # the worker's commit, then its announcement
        session = make_session(world.project, world.member, long_transcript(60), seed="warm")
        small = make_session(world.project, world.member, long_transcript(5), seed="small")
    renders.clear()  # the worker's own rendering
    assert session.raw_size_bytes >= page_cache.WARM_MIN_RAW_BYTES > small.raw_size_bytes
    first = _get(client, world, session)
    assert first.status_code == 200 and renders == []  # served as the worker rendered it
    assert _cards(_get(client, world, session, "?page=2")) and len(renders) == 1  # other pages: on demand
    caching.clear()
    assert _cards(_get(client, world, session)) == _cards(first) and len(renders) == 2  # the same HTML
    assert _get(client, world, small).status_code == 200 and len(renders) == 3  # a small one: on first read


def test_a_session_that_failed_to_process_warms_nothing(
    client, world, make_session, settings, django_capture_on_commit_callbacks
) -> None:
    settings.SESSIONLEDGER_PROCESS_CPU_SECONDS = 0.000001  # spent before the first line is parsed
    heard: list[object] = []
    session_processed.connect(lambda sender, session, **_: heard.append(session.pk), weak=False, dispatch_uid="heard")
    try:
        with django_capture_on_commit_callbacks(execute=True):
            session = make_session(world.project, world.member, long_transcript(60), seed="broken")
            settings.SESSIONLEDGER_PROCESS_CPU_SECONDS = 30
            done = make_session(world.project, world.member, long_transcript(2), seed="done")
    finally:
        session_processed.disconnect(dispatch_uid="heard")
    assert session.status == "failed" and heard == [done.pk]
    assert "Processing failed" in _get(client, world, session).content.decode()


def test_a_change_to_any_frontend_module_or_card_macro_gives_pages_new_keys(tmp_path) -> None:
    """A deploy that changes only a template, or a module outside the session page's package (format,
    templating), must not serve the HTML cached by the old one."""
    (tmp_path / "session_page").mkdir()
    (tmp_path / "jinja2" / "frontend").mkdir(parents=True)
    (tmp_path / "session_page" / "render.py").write_text("A = 1\n")
    (tmp_path / "format.py").write_text("B = 1\n")
    macro = tmp_path / "jinja2" / "frontend" / "cards.html"
    macro.write_text("{% macro card() %}<div>{% endmacro %}")
    versions = [page_cache.renderer_version(tmp_path)]

    macro.write_text("{% macro card() %}<article>{% endmacro %}")
    versions.append(page_cache.renderer_version(tmp_path))
    (tmp_path / "format.py").write_text("B = 2\n")
    versions.append(page_cache.renderer_version(tmp_path))

    assert len(set(versions)) == 3


def test_the_worker_renders_the_whole_conversation_so_its_first_reader_does_not(
    client, world, make_session, renders, django_capture_on_commit_callbacks
) -> None:
    raw = long_transcript(60)
    lines = raw.splitlines(keepends=True)
    cut = len(b"".join(lines[: len(lines) // 2]))
    agent = "5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a"
    with django_capture_on_commit_callbacks(execute=True):  # each segment's commit, then its announcement
        for start, end, seed in ((0, cut, "warm-whole-1"), (cut, len(raw), "warm-whole-2")):
            last = make_session(
                world.project, world.member, raw[start:end], seed=seed,
                agent_session_id=agent, start_offset=start, end_offset=end,
            )  # fmt: skip
    renders.clear()  # the worker's own rendering
    client.force_login(world.viewer)
    first = client.get(f"/p/{world.project.slug}/s/{last.pk}/conversation")
    assert first.status_code == 200 and renders == []  # page 1 and its overview, as the worker rendered them
    assert "Turn 1: please change module_1.py" in first.content.decode()
    assert client.get(f"/p/{world.project.slug}/s/{last.pk}/conversation?page=2").status_code == 200
    assert len(renders) == 1  # other pages: on demand

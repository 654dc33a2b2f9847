"""A second view of a session's pages revalidates (304) instead of downloading them again, and the
copy the browser keeps is the reader's own and only as long as nothing it shows has changed
(frontend/http_cache.py)."""

from __future__ import annotations

import gzip

import pytest
from django_scopes import scopes_disabled

from frontend import http_cache
from projects.models import Membership, Role
from projects.scoping import project_scope
from sessions_app.models import AccessLog, Session
from sessions_app.processing import session_reprocess
from tests.frontend.conftest import long_transcript
from tests.frontend.test_whole_conversation import AGENT, _upload, _url

pytestmark = pytest.mark.django_db


def _page(client, world, session: Session, query: str = "") -> str:
    return f"/p/{world.project.slug}/s/{session.pk}{query}"


def _again(client, url: str, first, **headers):
    return client.get(url, HTTP_IF_NONE_MATCH=first["ETag"], **headers)


@pytest.fixture
def long_session(world, make_session) -> Session:
    return make_session(world.project, world.member, long_transcript(40), seed="revalidate")


def test_a_second_view_of_the_session_page_is_a_304_and_still_a_recorded_read(client, world, long_session) -> None:
    client.force_login(world.viewer)
    url = _page(client, world, long_session)
    first = client.get(url, HTTP_ACCEPT_ENCODING="gzip")
    assert first.status_code == 200 and first["Content-Encoding"] == "gzip"
    assert first["Cache-Control"] == "private, no-cache"  # only the reader's browser keeps it, and asks first
    assert first["ETag"].startswith('W/"') and first.has_header("Last-Modified")
    second = _again(client, url, first, HTTP_ACCEPT_ENCODING="gzip")
    assert second.status_code == 304 and second.content == b""
    assert second["ETag"] and second["Cache-Control"] == "private, no-cache"
    with scopes_disabled():
        [entry] = AccessLog.objects.filter(session_id=long_session.pk, via="web")
    assert entry.count == 2  # the copy the browser shows is a read like any other


def test_each_later_page_and_filter_has_its_own_tag(client, world, long_session) -> None:
    client.force_login(world.viewer)
    first = client.get(_page(client, world, long_session))
    for query in ("?page=2", "?q=module_7", "?role=user"):
        other = _again(client, _page(client, world, long_session, query), first)
        assert other.status_code == 200 and other["ETag"] != first["ETag"], query
        assert _again(client, _page(client, world, long_session, query), other).status_code == 304, query


def test_new_content_or_a_new_renderer_gives_a_new_page(client, world, long_session, monkeypatch) -> None:
    client.force_login(world.viewer)
    url = _page(client, world, long_session)
    first = client.get(url)
    monkeypatch.setattr(http_cache, "PAGE_VERSION", "a-later-deploy")
    assert _again(client, url, first).status_code == 200
    monkeypatch.undo()
    with project_scope(world.project):
        session_reprocess(session=long_session)
    assert _again(client, url, first).status_code == 200


def test_another_reader_or_a_changed_role_never_gets_the_copy(client, world, long_session) -> None:
    client.force_login(world.viewer)
    url = _page(client, world, long_session)
    first = client.get(url)
    client.force_login(world.member)
    assert _again(client, url, first).status_code == 200  # the same browser, another account
    client.force_login(world.viewer)
    with scopes_disabled():
        Membership.objects.filter(project=world.project, user=world.viewer).update(role=Role.ADMIN)
    promoted = _again(client, url, first)
    assert promoted.status_code == 200 and "Read by" in promoted.content.decode()  # the admins' panel


def test_an_admin_sees_other_readers_reads_on_the_next_view(client, world, long_session) -> None:
    client.force_login(world.admin)
    url = _page(client, world, long_session)
    first = client.get(url)
    assert _again(client, url, first).status_code == 304  # the admin's own reads do not change the tag
    client.force_login(world.viewer)
    client.get(url)
    client.force_login(world.admin)
    fresh = _again(client, url, first)
    assert fresh.status_code == 200 and "victor@example.com" in fresh.content.decode()


def test_a_tag_gets_an_outsider_nothing(client, world, long_session) -> None:
    client.force_login(world.viewer)
    url = _page(client, world, long_session)
    first = client.get(url)
    client.force_login(world.outsider)
    assert _again(client, url, first).status_code == 404
    client.logout()
    assert _again(client, url, first).status_code == 302  # to the sign-in page


def test_the_whole_conversation_is_gzip_compressed_and_revalidated(client, world, make_session) -> None:
    _upload(world, make_session)
    client.force_login(world.viewer)
    url = _url(world)
    first = client.get(url, HTTP_ACCEPT_ENCODING="gzip, br")
    assert first.status_code == 200 and first["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in first["Vary"]
    assert "segment two marker" in gzip.decompress(first.content).decode()
    assert first["Cache-Control"] == "private, no-cache" and first.has_header("Last-Modified")
    assert _again(client, url, first, HTTP_ACCEPT_ENCODING="gzip").status_code == 304
    assert _again(client, url + "?page=2", first, HTTP_ACCEPT_ENCODING="gzip").status_code == 200
    with scopes_disabled():
        Session.objects.filter(project=world.project, agent_session_id=AGENT).update(commit_message="Reworded")
    assert _again(client, url, first, HTTP_ACCEPT_ENCODING="gzip").status_code == 200

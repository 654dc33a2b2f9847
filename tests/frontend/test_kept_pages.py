"""What the server keeps of a session's pages for every reader (frontend/http_cache.py): the content of
the session page and of the whole conversation, rendered once, and the later pages' response, compressed
once. A kept page is still the reader's own (their frame, their role's panels), fresh (what it shows
changed: a new page) and read only after the permission checks, each view in the access log."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django_scopes import scopes_disabled

from frontend import http_cache, stylesheets
from projects.models import Membership
from sessions_app.models import AccessLog, Session
from tests.frontend.conftest import long_transcript
from tests.frontend.test_whole_conversation import _upload, _url
from tests.integrations.records import pull_request

pytestmark = pytest.mark.django_db

CONTENT = "frontend/session/main.html"


def _page(world, session: Session, query: str = "") -> str:
    return f"/p/{world.project.slug}/s/{session.pk}{query}"


def _rendered(response) -> list[str]:
    return [template.name for template in response.templates]


@pytest.fixture
def long_session(world, make_session) -> Session:
    return make_session(world.project, world.member, long_transcript(40), seed="kept")


def test_a_second_reader_gets_the_content_without_it_being_rendered_again(client, world, long_session) -> None:
    url = _page(world, long_session)
    client.force_login(world.viewer)
    first = client.get(url)
    assert first.status_code == 200 and CONTENT in _rendered(first)
    client.force_login(world.member)
    second = client.get(url)
    page = second.content.decode()
    assert second.status_code == 200 and CONTENT not in _rendered(second)  # the kept content
    assert "mallory@example.com" in page and "victor@example.com" not in page  # the frame is the reader's
    assert "Turn 1: please change module_1.py" in page
    with scopes_disabled():
        assert sum(AccessLog.objects.filter(session_id=long_session.pk).values_list("count", flat=True)) == 2


def test_the_later_pages_are_compressed_once_for_every_reader(client, world, long_session) -> None:
    url = _page(world, long_session, "?page=2&through=9")
    client.force_login(world.viewer)
    first = client.get(url, HTTP_ACCEPT_ENCODING="gzip")
    client.force_login(world.member)
    second = client.get(url, HTTP_ACCEPT_ENCODING="gzip")
    assert first.status_code == second.status_code == 200 and second["Content-Encoding"] == "gzip"
    # the same bytes, random gzip header included: compressed once, not per request
    assert second.content == first.content and "Accept-Encoding" in second["Vary"]
    assert "Turn 40: please change module_40.py" in gzip.decompress(second.content).decode()
    assert second["ETag"].startswith('W/"') and second["ETag"] != first["ETag"]  # each reader's own tag
    assert client.get(url, HTTP_IF_NONE_MATCH=second["ETag"], HTTP_ACCEPT_ENCODING="gzip").status_code == 304
    plain = client.get(url)  # a browser without gzip gets the page rendered for it
    assert plain.status_code == 200 and not plain.has_header("Content-Encoding")
    with scopes_disabled():
        assert sum(AccessLog.objects.filter(session_id=long_session.pk).values_list("count", flat=True)) == 4


def _link_pull_request(world, session: Session) -> str:
    pull_request(world.project, number=12, commits=[session.commit_hash])
    return "Retry the upload on 503"


def _reword(world, session: Session) -> str:
    with scopes_disabled():
        Session.objects.filter(pk=session.pk).update(commit_message="Reworded the retry")
    return "Reworded the retry"


@pytest.mark.parametrize("change", [_link_pull_request, _reword], ids=["pull request linked", "session changed"])
def test_what_the_page_shows_changed_after_a_view_shows_on_the_next(client, world, long_session, change) -> None:
    url = _page(world, long_session)
    client.force_login(world.viewer)
    first = client.get(url)
    shown = change(world, long_session)
    assert shown not in first.content.decode()
    again = client.get(url, HTTP_IF_NONE_MATCH=first["ETag"])  # the browser's copy: no longer the page
    assert again.status_code == 200 and shown in again.content.decode()
    client.force_login(world.member)
    assert shown in client.get(url).content.decode()  # nor the content kept for every reader


def test_an_admins_page_is_never_another_readers(client, world, long_session) -> None:
    url = _page(world, long_session)
    client.force_login(world.viewer)
    client.get(url)
    client.force_login(world.admin)
    admin = client.get(url).content.decode()
    assert "Read by" in admin and "Delete…" in admin  # the access log and the admin's actions
    client.force_login(world.viewer)
    viewer = client.get(url).content.decode()
    assert "Read by" not in viewer and "Delete…" not in viewer


def test_a_kept_page_gets_a_removed_member_or_an_outsider_nothing(client, world, long_session) -> None:
    url = _page(world, long_session)
    later = _page(world, long_session, "?page=2&through=9")
    client.force_login(world.viewer)
    assert client.get(url).status_code == client.get(later, HTTP_ACCEPT_ENCODING="gzip").status_code == 200
    client.force_login(world.outsider)
    assert client.get(url).status_code == client.get(later, HTTP_ACCEPT_ENCODING="gzip").status_code == 404
    with scopes_disabled():
        Membership.objects.filter(project=world.project, user=world.viewer).delete()
    client.force_login(world.viewer)
    assert client.get(url).status_code == client.get(later, HTTP_ACCEPT_ENCODING="gzip").status_code == 404


def test_a_kept_page_is_compressed_around_its_kept_content_and_reads_whole(client, world, make_session) -> None:
    """Only the reader's frame is compressed per view; the page a browser inflates is the page."""
    segment = _upload(world, make_session)[-1]
    client.force_login(world.viewer)
    for url in (_page(world, segment), _page(world, segment, "/conversation")):
        client.get(url, HTTP_ACCEPT_ENCODING="gzip")  # renders and keeps the content
        kept = client.get(url, HTTP_ACCEPT_ENCODING="gzip")
        plain = client.get(url)
        assert kept["Content-Encoding"] == "gzip" and kept["ETag"].startswith('W/"'), url
        # the stylesheets as compressed once, not again in this page's stream
        assert http_cache.deflated(stylesheets.element().encode()) in kept.content, url
        page = gzip.decompress(kept.content).decode()  # checks the stream's CRC and length too
        assert "segment three marker" in page, url
        assert "victor@example.com" in page and page.endswith("</html>\n"), url
        token = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')  # masked anew per response
        assert token.sub("", page) == token.sub("", plain.content.decode()), url


def test_the_whole_conversation_content_is_rendered_once(client, world, make_session) -> None:
    _upload(world, make_session)
    client.force_login(world.viewer)
    first = client.get(_url(world))
    client.force_login(world.member)
    second = client.get(_url(world))
    assert "frontend/session/whole_main.html" in _rendered(first)
    assert "frontend/session/whole_main.html" not in _rendered(second)
    assert "segment two marker" in second.content.decode() and "mallory@example.com" in second.content.decode()


def test_the_whole_conversation_reads_its_segments_in_one_query(client, world, make_session) -> None:
    _upload(world, make_session)
    url = _url(world)
    client.force_login(world.viewer)
    client.get(url)
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    selects = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("SELECT")]
    assert sum('FROM "sessions_app_session"' in sql for sql in selects) == 1  # the named one's chain


def test_the_whole_conversation_counts_every_segments_read_in_one_statement(client, world, make_session) -> None:
    segments = _upload(world, make_session)
    url = _url(world)
    client.force_login(world.viewer)
    client.get(url)
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    statements = [q["sql"].lstrip() for q in queries.captured_queries]
    assert sum(sql.startswith("INSERT INTO sessions_app_accesslog") for sql in statements) == 1
    with scopes_disabled():
        counts = dict(AccessLog.objects.filter(user=world.viewer).values_list("session_id", "count"))
    assert counts == {segment.pk: 2 for segment in segments}  # each segment read twice, one row each


def test_a_template_change_is_a_new_page_version(tmp_path: Path) -> None:
    (tmp_path / "page.html").write_text("<p>one</p>")
    before = http_cache.page_version([tmp_path])
    (tmp_path / "page.html").write_text("<p>two</p>")
    assert http_cache.page_version([tmp_path]) != before


def test_a_parameter_the_page_does_not_read_makes_no_other_kept_copy(client, world, long_session) -> None:
    client.force_login(world.viewer)
    assert CONTENT in _rendered(client.get(_page(world, long_session)))
    client.force_login(world.member)
    padded = client.get(_page(world, long_session, "?utm_source=flood-1"))
    assert padded.status_code == 200 and CONTENT not in _rendered(padded)
    filtered = client.get(_page(world, long_session, "?role=user"))
    assert CONTENT in _rendered(filtered)  # a filter the page reads is another content


def test_a_permalinks_choice_of_sessions_is_not_kept_for_a_plain_view(client, world, long_session) -> None:
    at = "?at=5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17"
    client.force_login(world.viewer)
    offered = client.get(_page(world, long_session, at + "&also=1"))
    assert offered.status_code == 200 and "also-in" in offered.content.decode()
    client.force_login(world.member)
    assert "also-in" not in client.get(_page(world, long_session, at)).content.decode()

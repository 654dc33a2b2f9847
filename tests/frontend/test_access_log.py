"""The access log pages (admins only) and deleting a session from the UI."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django_scopes import scopes_disabled

from sessions_app import blobs
from sessions_app.models import AccessLog, Session, this_hour


@pytest.fixture
def read_session(world, ingest):
    """A session the viewer has read once on its page."""
    session = ingest(world.project, world.member, "Audit this session", seed="audited")
    viewer = Client(HTTP_USER_AGENT="Mozilla/5.0 (X11; Linux) Firefox/140.0", REMOTE_ADDR="203.0.113.9")
    viewer.force_login(world.viewer)
    assert viewer.get(f"/p/{world.project.slug}/s/{session.pk}").status_code == 200
    return session


def _entries() -> list[AccessLog]:
    with scopes_disabled():
        return list(AccessLog.objects.select_related("user").order_by("at"))


def test_reading_the_session_page_writes_exactly_one_row(read_session, world) -> None:
    [entry] = _entries()
    assert (entry.user, entry.session_id, entry.via, entry.ip) == (world.viewer, read_session.pk, "web", "203.0.113.9")


@pytest.mark.parametrize("path", ["access-log", "s/{id}/access"])
def test_an_admin_sees_who_read_when_how_and_from_where(read_session, world, client, path) -> None:
    client.force_login(world.admin)
    response = client.get(f"/p/{world.project.slug}/{path.format(id=read_session.pk)}")
    assert response.status_code == 200
    row = re.search(r"<tbody>(.*?)</tbody>", response.content.decode(), re.S)[1]
    assert world.viewer.email in row and ">web<" in row and "203.0.113.9" in row and "Firefox/140.0" in row
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", row)


@pytest.mark.parametrize("role", ["member", "viewer"])
@pytest.mark.parametrize("path", ["access-log", "s/{id}/access"])
def test_members_and_viewers_get_403(read_session, world, client, role, path) -> None:
    client.force_login(world.user(role))
    assert client.get(f"/p/{world.project.slug}/{path.format(id=read_session.pk)}").status_code == 403


@pytest.mark.parametrize("path", ["access-log", "s/{id}/access", "s/{id}/delete"])
def test_an_outsider_gets_404(read_session, world, client, path) -> None:
    client.force_login(world.outsider)
    assert client.get(f"/p/{world.project.slug}/{path.format(id=read_session.pk)}").status_code == 404


def test_the_log_pages_back_and_forth_newest_first(read_session, world, client) -> None:
    hour = this_hour()
    with scopes_disabled():  # one row per reader, session, way and hour: 60 earlier hours of API reads
        AccessLog.objects.bulk_create(
            AccessLog(
                project=world.project,
                session_id=read_session.pk,
                user=world.member,
                via="api",
                hour=hour - timedelta(hours=n),
            )
            for n in range(1, 61)
        )
    client.force_login(world.admin)
    first = client.get(f"/p/{world.project.slug}/access-log").content.decode()
    assert first.count('class="badge via-') == 50 and "via-web" not in first  # the viewer's read is the oldest
    older = re.search(r'href="(\?cursor=[^"]+)" rel="next"|rel="next" href="(\?cursor=[^"]+)"', first)
    second = client.get(f"/p/{world.project.slug}/access-log{older[1] or older[2]}").content.decode()
    assert second.count('class="badge via-') == 11 and "via-web" in second and 'rel="next"' not in second
    newer = re.search(r'rel="prev" href="(\?cursor=[^"]+)"', second)[1]
    assert client.get(f"/p/{world.project.slug}/access-log{newer}").content.decode().count('class="badge via-') == 50


def test_the_session_page_shows_recent_reads_to_admins_only(read_session, world, client) -> None:
    url = f"/p/{world.project.slug}/s/{read_session.pk}"
    client.force_login(world.member)
    page = client.get(url).content.decode()
    assert "Read by" not in page and "/delete" not in page
    client.force_login(world.admin)
    page = client.get(url).content.decode()
    panel = re.search(r'<details class="panel access-panel">(.*?)</details>', page, re.S)[1]
    assert world.viewer.email in panel and world.admin.email in panel  # this very read included
    assert f"{url}/access" in panel and f"{url}/delete" in page


def test_an_admin_confirms_then_deletes_a_session_and_its_blobs(
    read_session, world, client, django_capture_on_commit_callbacks
) -> None:
    client.force_login(world.admin)
    url = f"/p/{world.project.slug}/s/{read_session.pk}/delete"
    confirm = client.get(url)
    assert confirm.status_code == 200 and b"Delete this session?" in confirm.content
    assert blobs.blob_storage().exists(read_session.raw_storage_key)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url)
    assert response.status_code == 302 and response["Location"] == f"/p/{world.project.slug}/"
    with scopes_disabled():
        assert not Session.objects.filter(pk=read_session.pk).exists()
    assert not blobs.blob_storage().exists(read_session.raw_storage_key)
    assert not blobs.blob_storage().exists(read_session.content_storage_key)
    assert [(e.user, e.via) for e in _entries()] == [(world.viewer, "web"), (world.admin, "delete")]

    page = client.get(f"/p/{world.project.slug}/access-log").content.decode()
    assert "Deleted the session “Audit this session”" in page  # the confirmation message
    log = re.search(r"<tbody>(.*?)</tbody>", page, re.S)[1]
    assert log.count("deleted session") == 2 and "Audit this session" not in log
    reads = client.get(f"/p/{world.project.slug}/s/{read_session.pk}/access")
    assert reads.status_code == 200 and b"a deleted session" in reads.content
    assert client.get(f"/p/{world.project.slug}/s/{read_session.pk}").status_code == 404


def test_a_member_cannot_delete(read_session, world, client) -> None:
    client.force_login(world.member)
    url = f"/p/{world.project.slug}/s/{read_session.pk}/delete"
    assert client.get(url).status_code == 403
    assert client.post(url).status_code == 403
    with scopes_disabled():
        assert Session.objects.filter(pk=read_session.pk).exists()
    assert blobs.blob_storage().exists(read_session.raw_storage_key)


def test_deleting_needs_the_csrf_token(read_session, world) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(world.admin)
    url = f"/p/{world.project.slug}/s/{read_session.pk}/delete"
    assert client.post(url).status_code == 403
    with scopes_disabled():
        assert Session.objects.filter(pk=read_session.pk).exists()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', client.get(url).content.decode())[1]
    assert client.post(url, {"csrfmiddlewaretoken": token}).status_code == 302


def test_paging_and_filtering_a_session_is_one_row_with_a_count(read_session, world) -> None:
    viewer = Client()
    viewer.force_login(world.viewer)
    url = f"/p/{world.project.slug}/s/{read_session.pk}"
    for query in ("?q=audit", "?role=user", "?page=2", "?q=audit&role=assistant"):
        assert viewer.get(url + query).status_code == 200
    [entry] = _entries()
    assert (entry.user, entry.via, entry.count) == (world.viewer, "web", 5)
    assert entry.hour == entry.at.replace(minute=0, second=0, microsecond=0)
    # another way of reading, or another reader, is another row
    assert viewer.get(f"{url}/raw").status_code == 200
    other = Client()
    other.force_login(world.member)
    other.get(url)
    assert sorted((e.user.email, e.via, e.count) for e in _entries()) == sorted(
        [(world.viewer.email, "web", 5), (world.viewer.email, "raw", 1), (world.member.email, "web", 1)]
    )


def test_the_log_filters_by_reader_and_date(read_session, world, client) -> None:
    hour = this_hour()
    with scopes_disabled():
        AccessLog.objects.create(
            project=world.project,
            session_id=read_session.pk,
            user=world.member,
            via="api",
            hour=hour - timedelta(days=3),
            at=hour - timedelta(days=3) + timedelta(minutes=5),
            count=7,
        )
    client.force_login(world.admin)
    base = f"/p/{world.project.slug}/access-log"

    def rows(query: str) -> str:
        page = client.get(base + query).content.decode()
        body = re.search(r"<tbody>(.*?)</tbody>", page, re.S)
        return body[1] if body else ""

    everything = rows("")
    assert world.viewer.email in everything and world.member.email in everything and "×7" in everything
    mine = rows(f"?who={world.member.email}")
    assert world.member.email in mine and world.viewer.email not in mine
    today = hour.date().isoformat()
    recent = rows(f"?since={today}")
    assert world.viewer.email in recent and world.member.email not in recent
    earlier = rows(f"?until={(hour - timedelta(days=1)).date().isoformat()}")
    assert world.member.email in earlier and world.viewer.email not in earlier
    page = client.get(base + f"?who={world.member.email}").content.decode()
    assert f'<option value="{world.member.email}" selected>' in page
    assert rows("?who=nobody%40example.com") == everything  # not a member: the filter is refused, not applied

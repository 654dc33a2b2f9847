"""The session page, the largest HTML we serve, goes gzip-compressed to browsers that accept it."""

from __future__ import annotations

import gzip

import pytest

pytestmark = pytest.mark.django_db


def test_the_session_page_is_served_gzip_compressed(client, world, make_session) -> None:
    session = make_session(world.project, world.member, seed="gz")
    client.force_login(world.viewer)
    response = client.get(f"/p/{world.project.slug}/s/{session.pk}", HTTP_ACCEPT_ENCODING="gzip, br")
    assert response.status_code == 200
    assert response["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in response["Vary"]
    html = gzip.decompress(response.content).decode()
    assert session.headline in html and html.rstrip().endswith("</html>")


def test_the_session_page_stays_plain_for_clients_without_gzip(client, world, make_session) -> None:
    session = make_session(world.project, world.member, seed="plain")
    client.force_login(world.viewer)
    response = client.get(f"/p/{world.project.slug}/s/{session.pk}")
    assert not response.has_header("Content-Encoding")
    assert session.headline in response.content.decode()

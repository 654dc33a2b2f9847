"""HTML injection through message fields, checked on the server's HTML.

The browser test (tests/frontend/browser/test_injection.py) attacks every field in Chromium;
these pin the two attacks reported, through the real pipeline and through a stored document
written before the parser normalised timestamps.
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from sessions_app import blobs
from sessions_app.models import Session
from tests.client.transcript_builder import TranscriptBuilder
from tests.frontend.injection import COPY_ATTRIBUTE, META_REFRESH, stored_copy

pytestmark = pytest.mark.django_db


class Elements(HTMLParser):
    def __init__(self, html: str) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None]]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, dict(attrs)))


def _elements(client, world, session: Session, path: str = "") -> list[tuple[str, dict[str, str | None]]]:
    client.force_login(world.viewer)
    response = client.get(f"/p/{world.project.slug}/s/{session.pk}{path}")
    assert response.status_code == 200
    return Elements(response.content.decode()).found


def _no_refresh(elements: list[tuple[str, dict[str, str | None]]]) -> None:
    assert [attrs for tag, attrs in elements if "http-equiv" in attrs or tag == "x"] == []


def test_timestamp_with_a_meta_refresh_is_never_markup(client, world, make_session) -> None:
    b = TranscriptBuilder().prompt("hello").assistant_text("hi")
    b.lines[0]["timestamp"] = b.lines[1]["timestamp"] = META_REFRESH
    session = make_session(world.project, world.member, b.turn_end().build(), seed="meta-refresh")
    _no_refresh(_elements(client, world, session))
    document = blobs.load_json_gz(session.content_storage_key)
    assert document["messages"][0]["timestamp"] is None and document["stats"]["invalid_timestamps"] == 2


def test_a_stored_timestamp_with_a_meta_refresh_stays_text(client, world, make_session) -> None:
    session = make_session(world.project, world.member, TranscriptBuilder().prompt("hello").build(), seed="stored")
    document = blobs.load_json_gz(session.content_storage_key)
    for item in document["messages"] + document["turns"]:
        item["timestamp"] = META_REFRESH
    hostile = stored_copy(session, document)
    _no_refresh(_elements(client, world, hostile))
    _no_refresh(_elements(client, world, hostile, "/m/0"))


def test_todo_status_cannot_add_a_copy_attribute(client, world, make_session) -> None:
    todos = [{"content": "pwn", "status": COPY_ATTRIBUTE}, {"content": COPY_ATTRIBUTE, "status": "pending"}]
    raw = TranscriptBuilder().prompt("plan").tool_call("TodoWrite", {"todos": todos}).turn_end().build()
    elements = _elements(client, world, make_session(world.project, world.member, raw, seed="todo"))
    assert [(tag, attrs) for tag, attrs in elements if "data-copy" in attrs and tag != "button"] == []
    assert [attrs for _, attrs in elements if attrs.get("id") == "p"] == []
    assert [attrs["class"] for tag, attrs in elements if tag == "li" and "todo" in (attrs.get("class") or "")] == [
        "todo-pending",
        "todo-pending",
    ]

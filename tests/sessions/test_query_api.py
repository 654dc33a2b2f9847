"""The query API of docs/design.md §4, as a team lead's script would use it."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.client.transcript_builder import TranscriptBuilder
from tests.uploads import commit_hash


def _list(client, slug: str, query: str = "") -> dict:
    response = client.get(f"/api/v1/projects/{slug}/sessions{query}")
    assert response.status_code == 200, response.content
    return response.json()


def _ids(page: dict) -> list[str]:
    return [s["id"] for s in page["results"]]


def test_the_list_is_newest_first_with_the_documented_fields(world, ingest, api_as) -> None:
    first = ingest(world.project, world.member, "first")
    second = ingest(world.project, world.admin, "second")
    page = _list(api_as(world.viewer), world.project.slug)
    assert _ids(page) == [str(second.pk), str(first.pk)]
    item = page["results"][0]
    assert item["author"] == {"id": world.admin.pk, "email": world.admin.email}
    assert item["web_url"].endswith(f"/p/{world.project.slug}/s/{second.pk}")
    assert {"next", "previous", "results"} == set(page)


def test_filters_select_exactly_the_matching_sessions(world, ingest, api_as) -> None:
    a = ingest(world.project, world.member, "refactor the parser", feature_branch="feat/parser")
    b = ingest(
        world.project,
        world.admin,
        "add billing export",
        feature_branch="feat/billing",
        commit_message="Export invoices as CSV",
    )
    c = ingest(world.project, world.member, "task work", kind="task", task_id="SL-42", status="rejected")
    client = api_as(world.viewer)
    slug = world.project.slug
    assert _ids(_list(client, slug, "?branch=feat/parser")) == [str(a.pk)]
    assert _ids(_list(client, slug, f"?author={world.admin.email}")) == [str(b.pk)]
    assert _ids(_list(client, slug, f"?author={world.admin.pk}")) == [str(b.pk)]
    assert _ids(_list(client, slug, f"?commit={b.commit_hash[:7]}")) == [str(b.pk)]
    assert _ids(_list(client, slug, "?task=SL-42")) == [str(c.pk)]
    assert _ids(_list(client, slug, "?kind=task&status=rejected")) == [str(c.pk)]
    assert _ids(_list(client, slug, "?q=parser")) == [str(a.pk)]
    assert _ids(_list(client, slug, "?q=invoices")) == [str(b.pk)]  # commit message
    assert _ids(_list(client, slug, "?q=Done")) == [str(c.pk), str(b.pk), str(a.pk)]  # assistant text
    since = b.captured_at.isoformat()
    assert _ids(_list(client, slug, f"?since={since.replace('+', '%2B')}")) == [str(c.pk), str(b.pk)]


def test_a_commit_prefix_shorter_than_seven_is_a_400(world, api_as) -> None:
    response = api_as(world.viewer).get(f"/api/v1/projects/{world.project.slug}/sessions?commit=abc12")
    assert response.status_code == 400 and response.json()["error"]["field"] == "commit"


def test_keyset_pages_cover_everything_once(world, ingest, api_as) -> None:
    made = [ingest(world.project, world.member, f"prompt {n}") for n in range(5)]
    client, seen, url = api_as(world.viewer), [], f"/api/v1/projects/{world.project.slug}/sessions?limit=2"
    while url:
        page = client.get(url).json()
        assert len(page["results"]) <= 2
        seen += _ids(page)
        url = page["next"]
    assert seen == [str(s.pk) for s in reversed(made)]


def test_the_list_costs_the_same_queries_for_one_row_or_many(world, ingest, api_as) -> None:
    client = api_as(world.viewer)
    ingest(world.project, world.member, "one")
    with CaptureQueriesContext(connection) as few:
        _list(client, world.project.slug)
    for n in range(4):
        ingest(world.project, world.admin, f"more {n}")
    with CaptureQueriesContext(connection) as many:
        assert len(_list(client, world.project.slug)["results"]) == 5
    assert len(many.captured_queries) == len(few.captured_queries)
    session_queries = [q for q in many.captured_queries if 'FROM "sessions_app_session"' in q["sql"]]
    assert len(session_queries) == 1


def test_detail_commit_and_task_lookups(world, ingest, api_as) -> None:
    session = ingest(world.project, world.member, "look me up", kind="task", task_id="SL-5", status="complete")
    client, slug = api_as(world.viewer), world.project.slug
    detail = client.get(f"/api/v1/projects/{slug}/sessions/{session.pk}").json()
    assert detail["title"] == "look me up" and detail["links"]["messages"].endswith("/messages")
    by_commit = client.get(f"/api/v1/projects/{slug}/commits/{session.commit_hash[:9]}").json()
    assert [s["id"] for s in by_commit["results"]] == [str(session.pk)]
    by_task = client.get(f"/api/v1/projects/{slug}/tasks/SL-5").json()
    assert [s["id"] for s in by_task["results"]] == [str(session.pk)]


def test_another_projects_session_is_a_404_even_for_an_admin_here(world, ingest, api_as) -> None:
    theirs = ingest(world.other_project, world.other_admin, "secret plans")
    client = api_as(world.admin)
    for suffix in ("", "/messages", "/raw"):
        response = client.get(f"/api/v1/projects/{world.project.slug}/sessions/{theirs.pk}{suffix}")
        assert response.status_code == 404
    assert client.get(f"/api/v1/projects/{world.project.slug}/commits/{theirs.commit_hash}").json()["results"] == []
    assert _list(client, world.project.slug, "?q=secret")["results"] == []


def test_messages_page_with_offset_and_limit(world, ingest, api_as) -> None:
    session = ingest(world.project, world.member, "page me")
    url = f"/api/v1/projects/{world.project.slug}/sessions/{session.pk}/messages"
    client = api_as(world.viewer)
    everything = client.get(url).json()
    page = client.get(f"{url}?offset=1&limit=1").json()
    assert everything["count"] == session.message_count
    assert page["results"] == everything["results"][1:2]


def test_messages_of_a_session_still_processing_are_a_409(world, api_as) -> None:
    from tests.uploads import metadata_for, upload

    raw = TranscriptBuilder().prompt("later").build()
    accepted = upload(
        api_as(world.member), world.project.slug, raw, metadata_for(raw, commit_hash=commit_hash("later"))
    ).json()
    response = api_as(world.viewer).get(f"{accepted['url'].replace('http://testserver', '')}/messages")
    assert response.status_code == 409 and response.json()["error"]["code"] == "processing"


def test_the_openapi_schema_documents_every_endpoint(world, api_as) -> None:
    response = api_as(world.viewer).get("/api/v1/schema", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in (
        "/api/v1/projects/{project}/sessions",
        "/api/v1/projects/{project}/sessions/{session_id}/messages",
        "/api/v1/projects/{project}/commits/{sha}",
        "/api/v1/projects/{project}/members",
    ):
        assert path in paths
    assert {"202", "409", "413", "415", "503"} <= set(paths["/api/v1/projects/{project}/sessions"]["post"]["responses"])


def test_the_fast_session_representation_equals_drfs_generic_one(world, ingest) -> None:
    from django.urls import reverse
    from rest_framework import serializers as drf

    from sessions_app.serializers import SessionDetailSerializer

    session = ingest(world.project, world.member, "compare me", kind="task", task_id="SL-1", status="complete")
    fast = SessionDetailSerializer(session).data
    generic = drf.ModelSerializer.to_representation(SessionDetailSerializer(), session)
    assert fast == generic
    assert fast["url"].endswith(
        reverse("api-session", kwargs={"project": world.project.slug, "session_id": session.pk})
    )


def test_role_assistant_keeps_the_assistants_thinking(world, ingest, api_as) -> None:
    raw = TranscriptBuilder().prompt("why?").thinking("let me think").assistant_text("Because.").turn_end().build()
    session = ingest(world.project, world.member, raw=raw)
    url = f"/api/v1/projects/{world.project.slug}/sessions/{session.pk}/messages"
    client = api_as(world.viewer)
    assistant = client.get(url, {"role": "assistant"}).json()["results"]
    assert [(m["role"], m["kind"]) for m in assistant] == [("assistant", "thinking"), ("assistant", "text")]
    thinking = client.get(url, {"kind": "thinking"}).json()["results"]
    assert [m["content"] for m in thinking] == ["let me think"]
    refused = client.get(url, {"role": "thinking"})
    assert refused.status_code == 400 and "kind=thinking" in refused.json()["error"]["message"]

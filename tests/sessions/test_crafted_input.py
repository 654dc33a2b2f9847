"""Crafted input answers a 4xx, never a 500: one table of attacks, run with DEBUG off as in production.

Each row is an attack once found against the service; an API route must answer the JSON
error of docs/api.md, a page a 4xx HTML page. The general walls are config.middleware (NUL or
invalid UTF-8 anywhere in the path, query or headers) and validation at the serializer and
filter layer (sessions_app.validation).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.test import Client

from sessions_app.models import Session
from tests.client.transcript_builder import TranscriptBuilder
from tests.uploads import metadata_for, upload

RAW = TranscriptBuilder().prompt("Add capture").assistant_text("Done.").turn_end().build()
P = "/api/v1/projects/{project}"


@dataclass(frozen=True)
class Attack:
    name: str
    url: str = ""
    metadata: Callable[[dict[str, Any]], str] | None = None  # an upload with this metadata text
    headers: dict[str, str] = field(default_factory=dict)
    page: bool = False  # a browser page (HTML) rather than the API
    anonymous: bool = False
    body: str | None = None  # POSTed to url as application/json, exactly as written


def _with(**fields: Any) -> Callable[[dict[str, Any]], str]:
    return lambda meta: json.dumps({**meta, **fields})


def _nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


def _raw_json(fragment: str) -> Callable[[dict[str, Any]], str]:
    """Metadata with a member spelled as raw JSON (numbers and escapes Python would not write)."""
    return lambda meta: json.dumps(meta)[:-1] + ", " + fragment + "}"


ATTACKS = [
    Attack("author_superscript_two", f"{P}/sessions?author=%C2%B2"),
    Attack("author_of_5000_digits", f"{P}/sessions?author=" + "1" * 5000),
    Attack("search_of_5000_dashes_then_x", f"{P}/sessions?q=" + "-" * 5000 + "x"),
    Attack("cursor_p_equals_2", f"{P}/sessions?cursor=cD0y"),
    Attack("nul_in_repo_filter", "/api/v1/projects?repo=github.com/acme/a%00b"),
    Attack("nul_in_task_id", f"{P}/tasks/SL-1%00"),
    Attack("nul_in_agent_session_id", f"{P}/agent-sessions/abc%00def"),
    Attack("nul_in_agent_session_transcript", f"{P}/agent-sessions/abc%00def/transcript"),
    Attack("until_turn_superscript_two", f"{P}/agent-sessions/{{agent}}/transcript?until_turn=%C2%B2"),
    Attack("until_turn_of_5000_digits", f"{P}/agent-sessions/{{agent}}/transcript?until_turn=" + "9" * 5000),
    Attack("nul_in_user_agent", f"{P}/sessions/{{session}}/messages", headers={"User-Agent": "curl\x00"}),
    Attack("invalid_utf8_in_query", f"{P}/sessions?branch=%C3%28"),
    Attack("idempotency_key_over_200", metadata=_with(), headers={"Idempotency-Key": "k" * 201}),
    Attack("start_offset_1e30", metadata=_raw_json('"start_offset": 1e30')),
    Attack("start_offset_beyond_bigint", metadata=_raw_json('"start_offset": 1' + "0" * 30)),
    Attack("nul_in_redaction_key", metadata=_raw_json('"redaction": {"github\\u0000token": 1}')),
    Attack("lone_surrogate_in_redaction_key", metadata=_raw_json('"redaction": {"\\ud800": 1}')),
    Attack("metadata_of_100000_brackets", metadata=lambda meta: "[" * 100_000),
    Attack("newline_in_branch", metadata=_with(feature_branch="feat/x\nfoo")),
    Attack("newline_in_task_id", metadata=_with(kind="task", task_id="SL-1\n2", status="complete")),
    Attack("why_of_100000_brackets", f"{P}/commits/{{sha}}/why", body=_nested(100_000)),
    Attack(
        "why_line_of_100000_brackets",
        f"{P}/commits/{{sha}}/why",
        body='{"path": "a", "line": ' + _nested(100_000) + "}",
    ),
    Attack(
        "why_added_nested_900_deep",  # parses, then broke whatever walked it deeper in the stack
        f"{P}/commits/{{sha}}/why",
        body='{"path": "a", "line": 1, "added": [[1, "0123456789abcdef", ' + _nested(900, "true") + "]]}",
    ),
    Attack(
        "match_of_100000_braces", f"{P}/commits/{{sha}}/attribution/match", body='{"a":' * 100_000 + "1" + "}" * 100_000
    ),
    Attack("share_of_100000_brackets", f"{P}/sessions/{{session}}/shares", body=_nested(100_000)),
    Attack("token_of_100000_brackets", "/api/v1/tokens", body=_nested(100_000)),
    Attack("members_of_100000_brackets", f"{P}/members", body=_nested(100_000)),
    Attack("device_start_of_100000_brackets", "/api/v1/auth/device", body=_nested(100_000), anonymous=True),
    Attack("device_poll_of_100000_brackets", "/api/v1/auth/device/token", body=_nested(100_000), anonymous=True),
    Attack(
        "lone_surrogate_scope_in_device_start", "/api/v1/auth/device", body='{"scopes": ["\\ud800"]}', anonymous=True
    ),
    Attack("lone_surrogate_client_name", "/api/v1/auth/device", body='{"client_name": "\\udfff"}', anonymous=True),
    Attack(
        "lone_surrogate_device_code", "/api/v1/auth/device/token", body='{"device_code": "\\ud800"}', anonymous=True
    ),
    Attack("lone_surrogate_token_scope", "/api/v1/tokens", body='{"name": "x", "scopes": ["\\ud800"]}'),
    Attack("lone_surrogate_member_role", f"{P}/members", body='{"email": "a@example.com", "role": "\\ud800"}'),
    Attack("lone_surrogate_key_in_match", f"{P}/commits/{{sha}}/attribution/match", body='{"\\ud800": 1}'),
    Attack("nul_in_invitation_token", "/invitations/abc%00def/", page=True, anonymous=True),
    Attack("nul_in_device_code", "/device?code=ABCD%00", page=True),
    Attack("nul_in_task_page", "/p/{project_slug}/t/SL-1%00", page=True),
    Attack("nul_in_branch_page", "/p/{project_slug}/b/main%00", page=True),
]


@pytest.fixture
def production(settings) -> None:
    settings.DEBUG = False


@pytest.fixture
def stored(world, ingest) -> Session:
    return ingest(world.project, world.member, "a session the attacks can point at")


@pytest.mark.parametrize("attack", ATTACKS, ids=[attack.name for attack in ATTACKS])
def test_crafted_input_is_a_4xx_not_a_500(world, api_as, stored, production, attack: Attack) -> None:
    response = _send(world, api_as, stored, attack)
    assert 400 <= response.status_code < 500, (response.status_code, response.content[:300])
    if attack.page:
        assert response["Content-Type"].startswith("text/html")
    else:
        error = response.json()["error"]
        assert error["code"] and error["message"]


def _send(world, api_as, stored: Session, attack: Attack) -> Any:
    headers = {f"HTTP_{name.upper().replace('-', '_')}": value for name, value in attack.headers.items()}
    if attack.page:
        client = Client(raise_request_exception=False)
        if not attack.anonymous:
            client.force_login(world.member)
    else:
        client = api_as(None if attack.anonymous else world.admin)
        client.raise_request_exception = False
    if attack.metadata is not None:
        text = attack.metadata(metadata_for(RAW))
        return upload(client, world.project.slug, RAW, metadata_text=text, **attack.headers)
    url = attack.url.format(
        project=world.project.slug,
        project_slug=world.project.slug,
        agent=stored.agent_session_id,
        session=stored.pk,
        sha=stored.commit_hash,
    )
    if attack.body is not None:
        return client.post(url, attack.body, content_type="application/json", **headers)
    return client.get(url, **headers)


def test_a_newline_in_a_branch_or_task_id_names_the_field(world, api_as) -> None:
    for fields, name in (({"feature_branch": "a\nb"}, "feature_branch"), ({"task_id": "a\nb"}, "task_id")):
        meta = metadata_for(RAW, **fields, **({"kind": "task", "status": "complete"} if name == "task_id" else {}))
        response = upload(api_as(world.member), world.project.slug, RAW, meta)
        assert response.status_code == 400 and response.json()["error"]["field"] == name


def test_a_search_with_many_nots_is_answered(world, api_as, ingest) -> None:
    ingest(world.project, world.member, "tokenizer rewrite")
    client = api_as(world.viewer)
    for query in ("-" * 40 + "x", "- " * 200 + "x"):
        response = client.get(f"/api/v1/projects/{world.project.slug}/sessions", {"q": query})
        assert response.status_code == 200 and isinstance(response.json()["results"], list)


def test_an_author_given_by_id_or_email_still_filters(world, api_as, ingest) -> None:
    mine = ingest(world.project, world.member, "mine")
    client = api_as(world.viewer)
    for author in (str(world.member.pk), world.member.email.upper()):
        page = client.get(f"/api/v1/projects/{world.project.slug}/sessions", {"author": author}).json()
        assert [s["id"] for s in page["results"]] == [str(mine.pk)]


def test_a_branch_stored_with_a_newline_no_longer_breaks_its_sessions_page(world, ingest, client) -> None:
    """Sessions stored before ingest refused control characters are repaired by migration 0010."""
    from django.apps import apps
    from django_scopes import scopes_disabled

    migration = importlib.import_module("sessions_app.migrations.0010_secingest_raw_digest_attempts")
    session = ingest(world.project, world.member, kind="task", task_id="SL-1", status="complete")
    with scopes_disabled():
        Session.objects.filter(pk=session.pk).update(feature_branch="feat/x\nfoo", task_id="SL-1\n2")
    migration.replace_control_characters(apps, None)
    with scopes_disabled():
        session.refresh_from_db()
    assert (session.feature_branch, session.task_id) == ("feat/x foo", "SL-1 2")
    client.force_login(world.member)
    assert client.get(f"/p/{world.project.slug}/s/{session.pk}").status_code == 200


def test_json_nested_32_levels_is_read_and_33_is_refused_as_unparseable(world, api_as, stored) -> None:
    url = f"/api/v1/projects/{world.project.slug}/commits/{stored.commit_hash}/why"

    def why_with_trivial_nested(levels: int) -> dict:  # root, "added", the line: 3 levels before the value
        body = '{"path": "a", "line": 1, "added": [[1, "0123456789abcdef", ' + _nested(levels - 3, "true") + "]]}"
        return api_as(world.viewer).post(url, body, content_type="application/json").json()["error"]

    assert why_with_trivial_nested(32)["code"] == "invalid"  # parsed; the line's third value is not a bool
    refused = why_with_trivial_nested(33)
    assert refused["code"] == "parse_error" and "32 levels" in refused["message"]


def test_a_lone_surrogate_is_refused_and_the_refusal_is_text(world, api_as) -> None:
    response = api_as(None).post("/api/v1/auth/device", '{"scopes": ["\\udc00"]}', content_type="application/json")
    assert response.status_code == 400 and response.json()["error"]["code"] == "parse_error"
    response.content.decode("utf-8")  # the whole answer is UTF-8

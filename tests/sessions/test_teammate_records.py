"""A teammate's attribution record never acts on the reader: tried as a member of the project
attacking a colleague's commit and session (docs/security.md "Records and links a teammate
cannot forge")."""

from __future__ import annotations

import json
from importlib import import_module
from typing import Any

import pytest
from django.db import connection
from django_scopes import scopes_disabled

from projects.models import Role
from sessions_app.attribution import validation
from sessions_app.models import Attribution, Session
from tests.factories import make_member
from tests.sessions.test_attribution_api import SHA, attributed_session, attribution_post, record, upload_with

STEP = "3f2c0b7e-5d1a-4c8e-9b7f-0a1b2c3d4e5f"


@pytest.fixture
def colleague_commit(world, api_as) -> Session:
    """The colleague's checkpoint of SHA, with its record: what the attacks aim at."""
    response = upload_with(api_as(world.member), world.project.slug, record())
    assert response.json()["attribution"] == {"status": "stored"}
    with scopes_disabled():
        return Session.objects.get(pk=response.json()["id"])


@pytest.fixture
def attacker(world):
    return make_member(world.project, Role.MEMBER, email="eve@example.com")


def _nested(depth: int) -> bytes:
    """A valid record whose metadata also holds ``depth`` nested lists (written out, not encoded)."""
    bad = record()
    bad["metadata"]["deep"] = "DEEP"
    return json.dumps(bad).replace('"DEEP"', "[" * depth + "]" * depth).encode()


def _huge_lines() -> dict[str, Any]:
    """Ranges within their file, past PostgreSQL's integers (a manual session states no diff)."""
    huge = record()
    huge["metadata"]["dev.sessionledger"]["line_counts"] = {"src/capture.py": 2**32}
    huge["files"][0]["conversations"][0]["ranges"][0]["end_line"] = 2**32
    return huge


def _manual_on(client, slug: str, data: Any):
    """A manual session of the colleague's commit, from another agent session, carrying ``data``."""
    other = "9e1f2a3b-0000-4000-8000-000000000001"
    return upload_with(client, slug, data, kind="manual", agent_session_id=other, diff_stat={})


def _everyone_reads_the_commit(world, api_as) -> None:
    base = f"/api/v1/projects/{world.project.slug}/commits/{SHA}"
    for user in (world.admin, world.member, world.viewer):
        client = api_as(user)
        answer = client.get(f"{base}/attribution")
        assert answer.status_code == 200, answer.content
        assert [r["metadata"]["dev.sessionledger"]["line_counts"] for r in answer.json()["records"]] == [
            {"src/capture.py": 10}
        ]
        why = client.post(f"{base}/why", {"path": "src/capture.py", "line": 1}, format="json")
        assert why.status_code == 200 and why.json()["found"] is True, why.content


@pytest.mark.parametrize(
    ("data", "field"),
    [
        # Past what a deep copy recurses through, short of the JSON decoder's limit (~900 behind a
        # server whose stack is shallower than the test client's)
        (_nested(800), "metadata.deep" + "[0]" * 15),
        (_nested(17), "metadata.deep" + "[0]" * 15),
        (_huge_lines(), "metadata.dev.sessionledger.line_counts.src/capture.py"),
    ],
)
def test_a_poisoned_record_on_a_colleagues_commit_is_refused_alone(
    world, api_as, colleague_commit, attacker, data, field
) -> None:
    """Stored, it once made the commit's attribution, `why`, `blame` and the PR AI share answer 500
    for everyone; an integer past int4 made the whole upload answer 500 and store nothing."""
    response = _manual_on(api_as(attacker), world.project.slug, data)
    assert response.status_code == 202, response.content
    refused = response.json()["attribution"]
    assert refused["status"] == "refused" and refused["error"]["code"] == "invalid_attribution"
    assert refused["error"]["field"] == field
    with scopes_disabled():
        kept = Session.objects.get(pk=response.json()["id"])
        assert kept.kind == "manual" and Attribution.objects.get(session=kept).record is None
    _everyone_reads_the_commit(world, api_as)


def test_line_numbers_beyond_postgres_integers_are_refused_naming_the_range(world, api_as, attacker) -> None:
    """Ranges within a declared line count past 2³¹ once answered 500 and stored nothing."""
    session = attributed_session(world, api_as)
    huge = record()
    huge["metadata"]["dev.sessionledger"]["line_counts"] = {"src/capture.py": 2**31}
    huge["files"][0]["conversations"][0]["ranges"][0]["end_line"] = 2**31
    response = attribution_post(api_as(world.member), session, huge)
    assert response.status_code == 400, response.content
    assert response.json()["error"]["field"] == "metadata.dev.sessionledger.line_counts.src/capture.py"


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("a\u0000b", "NUL, which jsonb refuses"),
        ("\ud800", "a lone surrogate, which jsonb refuses"),
        ("x" * 5000, "a string over the bound"),
        (float("inf"), "a number JSON cannot carry"),
    ],
)
def test_a_value_out_of_bounds_or_unstorable_is_refused_not_a_500(world, api_as, value, why) -> None:
    session = attributed_session(world, api_as)
    bad = record()
    bad["metadata"]["note"] = value
    body = json.dumps(bad).encode("utf-8", "surrogatepass")
    response = attribution_post(api_as(world.member), session, body)
    assert response.status_code == 400, (why, response.content)
    assert response.json()["error"]["field"] in ("metadata.note", "attribution")


def test_a_member_cannot_replace_a_colleagues_attribution(world, api_as, colleague_commit, attacker) -> None:
    forged = record()
    forged["files"][0]["conversations"][0]["contributor"] = {"type": "human"}
    response = attribution_post(api_as(attacker), colleague_commit, forged)
    assert response.status_code == 403 and response.json()["error"]["code"] == "forbidden"
    with scopes_disabled():
        assert Attribution.objects.get(session=colleague_commit).ai_lines == 3
    assert attribution_post(api_as(world.admin), colleague_commit, forged).status_code == 201
    assert attribution_post(api_as(world.member), colleague_commit, record()).status_code == 201


def test_repeating_a_colleagues_upload_leaves_their_record_alone(world, api_as, colleague_commit, attacker) -> None:
    """The same bytes of the same segment are the colleague's session again (a repeat): its record
    is not the repeater's to replace, nor to flag as refused."""
    response = upload_with(api_as(attacker), world.project.slug, b"{not json")
    assert response.status_code == 200 and response.json()["id"] == str(colleague_commit.pk)
    assert response.json()["attribution"]["error"]["code"] == "forbidden"
    with scopes_disabled():
        found = Attribution.objects.get(session=colleague_commit)
    assert found.record is not None and found.error == {}


def _conversation_urls(data: dict[str, Any]) -> list[Any]:
    conversations = [c for entry in data["files"] for c in entry["conversations"]]
    return [(c.get("url"), [r["url"] for r in c.get("related", [])]) for c in conversations]


def test_links_in_a_record_to_another_site_are_dropped_on_input(world, api_as) -> None:
    session = attributed_session(world, api_as)
    hostile = record()
    ai, human = hostile["files"][0]["conversations"]
    hostile["metadata"]["dev.sessionledger"]["steps"][STEP].pop("prompt", None)
    permalink = f"http://testserver/p/{world.project.slug}/m/{STEP}"
    ai["related"] = [
        {"type": "prompt", "url": "javascript:alert(document.cookie)"},
        {"type": "doc", "url": "https://evil.example/p/acme-api/m/" + STEP},
        {"type": "doc", "url": f"http://testserver/p/{world.other_project.slug}/m/{STEP}"},
        {"type": "step", "url": permalink},
    ]
    human["url"] = "https://evil.example/login"
    assert attribution_post(api_as(world.member), session, hostile).status_code == 201
    served = api_as(world.viewer).get(f"/api/v1/projects/{world.project.slug}/sessions/{session.pk}/attribution")
    assert _conversation_urls(served.json()) == [(permalink, [permalink]), (None, [])]


def test_a_too_deep_record_stored_before_the_bound_is_refused_by_the_migration(
    world, api_as, colleague_commit, attacker
) -> None:
    """What the old code stored (written here as it was, past the input check) stops breaking the
    commit's reads once migration 0020 has run."""
    response = _manual_on(api_as(attacker), world.project.slug, record())
    with scopes_disabled():
        poisoned = Attribution.objects.get(session_id=response.json()["id"])
    shallow = record()
    shallow["metadata"]["deep"] = json.loads("[" * 15 + "]" * 15)  # at the bound: kept, as on input
    assert validation.parse(json.dumps(shallow).encode()) == shallow
    with scopes_disabled():
        Attribution.objects.filter(session=colleague_commit).update(record=shallow)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE sessions_app_attribution SET record = %s::jsonb WHERE id = %s", [_nested(800).decode(), poisoned.pk]
        )
        cursor.execute(import_module("sessions_app.migrations.0020_attribution_refuse_too_deep").REFUSE_TOO_DEEP)
    with scopes_disabled():
        poisoned.refresh_from_db()
        assert poisoned.record is None and poisoned.error["message"].endswith("nested deeper than 16 levels.")
        assert Attribution.objects.get(session=colleague_commit).record == shallow
    _everyone_reads_the_commit(world, api_as)

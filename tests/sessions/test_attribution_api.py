"""Attribution on the server: validation against the Agent Trace schema and the commit, the
ingest's choice (session kept, record dropped and flagged), the 400 naming the field on the
record's own endpoint, relinks, read-only tokens and tenants."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django_scopes import scopes_disabled

from sessionledger.core import attribution, attribution_record
from sessions_app.attribution.validation import SCHEMA_FILE
from sessions_app.models import Attribution, CommitLink, Session
from tests.client.attribution_helpers import SCHEMA, validate_agent_trace
from tests.conftest import conversation
from tests.uploads import commit_hash, metadata_for, upload

SHA = commit_hash("c1")
RAW = conversation("Add capture")


def record(**changes: Any) -> dict[str, Any]:
    """A valid record of SHA: lines 1-3 of src/capture.py by the agent, line 4 by a human."""
    lines = {"src/capture.py": [attribution.Line.of(n, f"line {n} of code") for n in range(1, 5)]}
    step = attribution.Step("3f2c0b7e-5d1a-4c8e-9b7f-0a1b2c3d4e5f", "Write", "/r/src/capture.py", [], 0, 0, "m")
    step.keys = frozenset(line.hash for line in lines["src/capture.py"][:3])
    owners = attribution.attribute(lines, [step])
    built = attribution_record.build_record(
        revision=SHA,
        added=lines,
        owners=owners,
        line_counts={"src/capture.py": 10},
        agent="claude-code",
        base_url="https://ledger.example",
        project="acme-api",
    )
    built.update(changes)
    return built


def attribution_part(data: dict[str, Any] | bytes) -> io.BytesIO:
    part = io.BytesIO(data if isinstance(data, bytes) else json.dumps(data).encode())
    part.name = "attribution.json"
    return part


def upload_with(client, slug: str, data: Any, **metadata: Any):
    body = {
        "metadata": json.dumps(metadata_for(RAW, **metadata)),
        "transcript": _gz(RAW),
        "attribution": attribution_part(data),
    }
    return client.post(f"/api/v1/projects/{slug}/sessions", body, format="multipart")


def _gz(raw: bytes) -> io.BytesIO:
    import gzip

    part = io.BytesIO(gzip.compress(raw))
    part.name = "transcript.jsonl.gz"
    return part


def stored() -> list[Attribution]:
    with scopes_disabled():
        return list(Attribution.objects.all())


def test_the_server_validates_against_the_vendored_published_schema() -> None:
    assert json.loads(SCHEMA_FILE.read_text()) == json.loads(SCHEMA.read_text())
    assert (Path(SCHEMA).parent / "LICENSE").read_text().count("CC BY 4.0") == 1
    validate_agent_trace(json.loads((Path(SCHEMA).parent / "example-record.json").read_text()))  # the spec's own
    validate_agent_trace(record())


def test_an_upload_stores_its_attribution_with_the_session(world, api_as) -> None:
    response = upload_with(api_as(world.member), world.project.slug, record())
    assert response.status_code == 202, response.content
    assert response.json()["attribution"] == {"status": "stored"}
    [found] = stored()
    assert str(found.session_id) == response.json()["id"]
    assert (found.added_lines, found.ai_lines) == (4, 3) and found.error == {}
    detail = api_as(world.viewer).get(response.json()["url"])
    assert detail.json()["attribution"] == {"status": "stored", "error": None}
    assert detail.json()["links"]["attribution"].endswith(f"/sessions/{found.session_id}/attribution")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"version": "one"}, "version"),
        ({"files": [{"path": "src/capture.py"}]}, "files[0]"),
        ({"vcs": {"type": "git", "revision": commit_hash("other")}}, "vcs.revision"),
    ],
)
def test_a_refused_record_keeps_the_session_and_flags_it_naming_the_field(world, api_as, change, field) -> None:
    response = upload_with(api_as(world.member), world.project.slug, record(**change))
    assert response.status_code == 202
    refused = response.json()["attribution"]
    assert refused["status"] == "refused" and refused["error"]["field"] == field
    with scopes_disabled():
        assert Session.objects.filter(pk=response.json()["id"]).exists()
    [found] = stored()
    assert found.record is None and found.error["field"] == field
    detail = api_as(world.viewer).get(f"/api/v1/projects/{world.project.slug}/sessions/{response.json()['id']}")
    assert detail.json()["attribution"] == {"status": "refused", "error": refused["error"]}


def attributed_session(world, api_as) -> Session:
    response = upload(api_as(world.member), world.project.slug, RAW)
    with scopes_disabled():
        return Session.objects.get(pk=response.json()["id"])


def attribution_post(client, session: Session, data: Any):
    body = data if isinstance(data, bytes) else json.dumps(data).encode()
    url = f"/api/v1/projects/{session.project.slug}/sessions/{session.pk}/attribution"
    return client.post(url, body, content_type="application/json")


def _with_path(path: str) -> dict[str, Any]:
    bad = record()
    bad["files"][0]["path"] = path
    bad["metadata"]["dev.sessionledger"]["line_counts"] = {path: 10}
    return bad


def _with_range(end: int) -> dict[str, Any]:
    bad = record()
    bad["files"][0]["conversations"][0]["ranges"][0]["end_line"] = end
    return bad


def _with_vendor(**changes: Any) -> dict[str, Any]:
    bad = record()
    bad["metadata"]["dev.sessionledger"].update(changes)
    return bad


def _with_step(step: Any) -> dict[str, Any]:
    bad = record()
    bad["files"][0]["conversations"][0]["dev.sessionledger.step"] = step
    return bad


VENDOR_FIELD = "metadata.dev.sessionledger"
STEP_FIELD = "files[0].conversations[0].dev.sessionledger.step"


@pytest.mark.parametrize(
    ("data", "field"),
    [
        (b"{not json", "attribution"),
        (_with_vendor(steps=["not", "a", "map"]), f"{VENDOR_FIELD}.steps"),
        (_with_vendor(steps={"../../admin": {}}), f"{VENDOR_FIELD}.steps"),
        (_with_vendor(line_hashes=[[1, "x"]]), f"{VENDOR_FIELD}.line_hashes"),
        (_with_vendor(line_counts="many"), f"{VENDOR_FIELD}.line_counts"),
        (_with_step("not-a-step-of-this-record"), STEP_FIELD),
        (_with_step({"a": 1}), STEP_FIELD),
        (record(id="not-a-uuid"), "id"),
        (record(timestamp="yesterday"), "timestamp"),
        (_with_path("../etc/passwd"), "files[0].path"),
        (_with_path("src/other.py"), "files[0].path"),
        (_with_range(11), "files[0].conversations[0].ranges[0].end_line"),
        (_with_range(0), "files[0].conversations[0].ranges[0].end_line"),
    ],
)
def test_the_attribution_endpoint_answers_400_naming_the_field(world, api_as, data, field) -> None:
    session = attributed_session(world, api_as)
    response = attribution_post(api_as(world.member), session, data)
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] in ("invalid_attribution",) and error["field"] == field
    assert stored() == []


def test_more_attributed_lines_than_the_commit_adds_is_refused(world, api_as) -> None:
    session = attributed_session(world, api_as)
    with scopes_disabled():
        Session.objects.filter(pk=session.pk).update(diff_stat={"files": 1, "insertions": 2, "deletions": 0})
    response = attribution_post(api_as(world.member), session, record())
    assert response.status_code == 400 and response.json()["error"]["field"] == "files"


def test_a_posted_record_is_served_for_the_session_and_its_commit_and_relinks(world, api_as) -> None:
    session = attributed_session(world, api_as)
    client = api_as(world.member)
    assert attribution_post(client, session, record()).status_code == 201
    base = f"/api/v1/projects/{world.project.slug}"

    by_session = client.get(f"{base}/sessions/{session.pk}/attribution")
    assert by_session.status_code == 200
    validate_agent_trace(by_session.json())
    [ai] = [c for c in by_session.json()["files"][0]["conversations"] if c["contributor"]["type"] == "ai"]
    assert (
        ai["url"] == f"http://testserver/p/{world.project.slug}/m/{attribution_record.step_of(ai)}"
    )  # not the client's
    assert by_session.json()["metadata"]["dev.sessionledger"]["session"]["id"] == str(session.pk)

    rebased = commit_hash("rebased")
    with scopes_disabled():
        CommitLink.objects.create(project=world.project, old_hash=SHA, new_hash=rebased)
    for sha in (SHA, SHA[:7], rebased):
        answer = client.get(f"{base}/commits/{sha}/attribution").json()
        assert answer["sessions"] == 1 and [r["vcs"]["revision"] for r in answer["records"]] == [SHA]
    assert client.get(f"{base}/commits/{commit_hash('none')}/attribution").json() == {
        "commit": commit_hash("none"),
        "sessions": 0,
        "records": [],
    }


def test_a_session_without_attribution_is_404(world, api_as) -> None:
    session = attributed_session(world, api_as)
    url = f"/api/v1/projects/{world.project.slug}/sessions/{session.pk}/attribution"
    assert api_as(world.member).get(url).status_code == 404


def test_a_read_only_token_may_ask_why_but_not_store_a_record(world, api_as) -> None:
    session = attributed_session(world, api_as)
    reader = api_as(world.member, scopes=["read"])
    assert attribution_post(reader, session, record()).status_code == 403
    why = reader.post(
        f"/api/v1/projects/{world.project.slug}/commits/{SHA}/why",
        {"path": "src/capture.py", "line": 1},
        format="json",
    )
    assert why.status_code == 200 and why.json()["found"] is False


def test_outsiders_and_other_tenants_see_nothing(world, api_as) -> None:
    session = attributed_session(world, api_as)
    assert attribution_post(api_as(world.member), session, record()).status_code == 201
    for user in (world.outsider, world.other_admin):
        client = api_as(user)
        base = f"/api/v1/projects/{world.project.slug}"
        assert client.get(f"{base}/commits/{SHA}/attribution").status_code == 404
        assert client.get(f"{base}/sessions/{session.pk}/attribution").status_code == 404
        assert client.post(f"{base}/commits/{SHA}/why", {"path": "a", "line": 1}, format="json").status_code == 404
    other = api_as(world.other_admin).get(f"/api/v1/projects/{world.other_project.slug}/commits/{SHA}/attribution")
    assert other.json()["records"] == []


def test_an_oversized_record_is_dropped_from_the_upload_and_413_on_its_own(world, api_as, settings) -> None:
    settings.SESSIONLEDGER_MAX_ATTRIBUTION_BYTES = 200
    response = upload_with(api_as(world.member), world.project.slug, record())
    assert response.status_code == 202
    assert response.json()["attribution"]["error"]["code"] == "too_large"
    with scopes_disabled():
        session = Session.objects.get(pk=response.json()["id"])
    assert attribution_post(api_as(world.member), session, record()).status_code == 413

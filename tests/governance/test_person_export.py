"""A person asks for everything kept about them (an access request): staff get one zip with their
account, memberships, the sessions they authored with the transcripts, the audit events by or about
them and what they read — and nothing of anyone else, never a token's hash."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import zipfile

from django.core.management import call_command
from django_scopes import scopes_disabled

from projects.models import ApiToken, AuditEvent
from tests.factories import UserFactory


def _opened(data: bytes) -> tuple[zipfile.ZipFile, dict]:
    archive = zipfile.ZipFile(io.BytesIO(data))
    manifest = json.loads(archive.read("manifest.json"))
    for name, entry in manifest["files"].items():
        assert hashlib.sha256(archive.read(name)).hexdigest() == entry["sha256"], name
    assert set(archive.namelist()) == {*manifest["files"], "manifest.json"}
    return archive, manifest


def _rows(archive: zipfile.ZipFile, name: str) -> list[dict]:
    return [json.loads(line) for line in archive.read(name).splitlines()]


def test_a_persons_export_holds_their_data_and_no_one_elses(world, ingest, api_as, tmp_path) -> None:
    theirs = ingest(world.project, world.member, "mallory's own prompt", seed="m1")
    other = ingest(world.project, world.admin, "alice's private prompt", seed="a1")
    base = f"/api/v1/projects/{world.project.slug}/sessions"
    reader = api_as(world.member)
    assert reader.get(f"{base}/{other.pk}/messages").status_code == 200  # an access-log row of theirs
    assert reader.post(f"{base}/{theirs.pk}/shares", {"days": 1}, format="json").status_code == 201

    target = tmp_path / "mallory.zip"
    call_command("export_person", "MALLORY@example.com", "--output", str(target), stdout=io.StringIO())
    archive, manifest = _opened(target.read_bytes())

    assert manifest["format"] == "sessionledger-person" and manifest["person"] == {"email": "mallory@example.com"}
    account = json.loads(archive.read("account.json"))
    assert account["email"] == "mallory@example.com" and account["addresses"][0]["verified"] is True
    assert [(m["project__slug"], m["role"]) for m in _rows(archive, "memberships.jsonl")] == [("acme-api", "member")]
    assert [s["id"] for s in _rows(archive, "sessions.jsonl")] == [str(theirs.pk)]
    assert b"mallory's own prompt" in gzip.decompress(archive.read(f"sessions/{theirs.pk}/raw.jsonl.gz"))
    assert not any(b"alice's private prompt" in _plain(archive.read(name)) for name in archive.namelist())
    assert "share.created" in {e["kind"] for e in _rows(archive, "audit.jsonl")}
    assert [(r["session_id"], r["via"]) for r in _rows(archive, "access_log.jsonl")] == [(str(other.pk), "api")]
    with scopes_disabled():
        hashes = [t.secret_hash.encode() for t in ApiToken.objects.filter(user=world.member)]
    assert hashes and not any(h in archive.read(name) for h in hashes for name in archive.namelist())
    with scopes_disabled():
        [event] = AuditEvent.objects.filter(kind="person.exported")
    assert (event.target, event.via) == ("mallory@example.com", "command")


def _plain(data: bytes) -> bytes:
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def test_only_staff_export_a_person_through_the_api(world, api_as) -> None:
    url = f"/api/v1/users/{world.member.pk}/export"
    assert api_as(world.admin).get(url).status_code == 404  # a project admin is not staff
    staff = UserFactory(email="ops@example.com", is_staff=True)
    response = api_as(staff).get(url)
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    archive, _ = _opened(b"".join(response.streaming_content))
    assert json.loads(archive.read("account.json"))["email"] == "mallory@example.com"
    with scopes_disabled():
        [event] = AuditEvent.objects.filter(kind="person.exported")
    assert (event.actor_email, event.target, event.via) == ("ops@example.com", "mallory@example.com", "api")


def test_a_refused_person_export_answers_json_even_when_a_zip_was_asked_for(world, api_as) -> None:
    response = api_as(world.admin).get(f"/api/v1/users/{world.member.pk}/export?format=zip")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"

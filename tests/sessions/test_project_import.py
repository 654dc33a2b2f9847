"""A project leaves one deployment and arrives in another: export, ``manage.py import_project``, and
every answer the API gave — sessions, messages, a commit's attribution, members, the audit trail, a
share link's page — is the same. A tampered archive, one from a newer release, or one whose rows do
not hold together writes nothing, in the database or in the bucket."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest
from allauth.account.models import EmailAddress
from django.core.management import CommandError, call_command
from django.test import Client
from django_scopes import scopes_disabled

from projects.models import AuditEvent, Project
from projects.scoping import project_scope
from sessions_app import blobs
from sessions_app.deletion import project_delete
from sessions_app.models import Session
from sessions_app.processing import session_process
from tests import realfixtures
from tests.client.sample_transcripts import AGENT_ID, every_line_type
from tests.conftest import conversation
from tests.realfixtures import real_transcripts
from tests.sessions.test_attribution_api import SHA, attribution_post, record
from tests.uploads import commit_hash, metadata_for, upload


def _transcripts(real: bool) -> tuple[bytes, bytes, bytes, bytes]:
    """(a checkpoint's, another, a third with a sub-agent, that sub-agent's) transcripts: the real Claude Code
    ones, or the suite's sample that uses every line type."""
    if real:
        folder = realfixtures.REAL_TRANSCRIPTS
        read = [
            (folder / name).read_bytes()
            for name in ("spotter__tool_heavy.jsonl", "spotter__subagent.jsonl", "spotter__short.jsonl")
        ]
        return read[0], read[1], read[2], read[1][:20000]
    main, subagents = every_line_type()
    return conversation("Write the capture test"), conversation("Run the test suite again"), main, subagents[AGENT_ID]


def _with_subagent(world, api_as, raw: bytes, sub: bytes) -> Session:
    meta = metadata_for(
        raw,
        commit_hash=commit_hash("with-subagent"),
        subagents=[{"agent_id": "a1", "start_offset": 0, "end_offset": len(sub)}],
    )
    response = upload(api_as(world.member), world.project.slug, raw, meta, subagents={"a1": sub})
    assert response.status_code == 202, response.content
    with scopes_disabled():
        session = Session.objects.select_related("project", "author").get(pk=response.json()["id"])
    with project_scope(world.project):
        session_process(session=session)
    return session


def _project_built(world, ingest, api_as, *, real: bool = False) -> dict[str, Any]:
    """acme-api with three transcripts, a sub-agent part, an attribution record, a relink, a share link."""
    with scopes_disabled():
        EmailAddress.objects.filter(user=world.viewer).update(verified=False)
    first, second, third, sub = _transcripts(real)
    checkpoint = ingest(world.project, world.member, raw=first, seed="c1")
    assert checkpoint.commit_hash == SHA
    ingest(world.project, world.admin, raw=second, seed="second")
    _with_subagent(world, api_as, third, sub)
    client = api_as(world.member)
    assert attribution_post(client, checkpoint, record()).status_code == 201
    base = f"/api/v1/projects/{world.project.slug}"
    relinked = client.post(f"{base}/commits/relink", {"pairs": [{"old": SHA, "new": commit_hash("r")}]}, format="json")
    assert relinked.status_code == 200, relinked.content
    share = client.post(f"{base}/sessions/{checkpoint.pk}/shares", {"days": 3}, format="json")
    return {"checkpoint": checkpoint.pk, "token": share.json()["url"].rsplit("/share/", 1)[1]}


def _answers(api_as, admin, slug: str, session_id: object) -> dict[str, Any]:
    client, base = api_as(admin), f"/api/v1/projects/{slug}"
    answers = {
        "sessions": client.get(f"{base}/sessions?limit=50").json(),
        "search": client.get(f"{base}/sessions?q=test").json(),
        "insights": client.get(f"{base}/insights").json(),
        "messages": client.get(f"{base}/sessions/{session_id}/messages?limit=500").json(),
        "attribution": client.get(f"{base}/commits/{commit_hash('r')}/attribution").json(),
        "members": client.get(f"/api/v1/projects/{slug}/members").json(),
    }
    for name, answer in answers.items():
        assert answer and "error" not in answer, (name, answer)
    return answers


def _export(api_as, admin, slug: str, path: Path) -> Path:
    response = api_as(admin).get(f"/api/v1/projects/{slug}/export")
    assert response.status_code == 200
    path.write_bytes(b"".join(response.streaming_content))
    return path


def _trail(project: Project) -> list[tuple[str, str, str]]:
    with scopes_disabled():
        events = AuditEvent.objects.filter(project_id=project.pk).order_by("at", "pk")
        return [(e.kind, e.actor_email, e.target) for e in events]


def _bucket_prefixes() -> set[str]:
    return set(blobs.blob_storage().listdir("")[0])


@pytest.mark.parametrize("real", [False, pytest.param(True, marks=real_transcripts)], ids=["sample", "real"])
def test_a_project_exported_deleted_and_imported_answers_as_before(world, ingest, api_as, tmp_path, real) -> None:
    made = _project_built(world, ingest, api_as, real=real)
    before = _answers(api_as, world.admin, "acme-api", made["checkpoint"])
    trail = _trail(world.project)
    archive = _export(api_as, world.admin, "acme-api", tmp_path / "acme.zip")
    with zipfile.ZipFile(archive) as opened:
        manifest = json.loads(opened.read("manifest.json"))
        assert manifest["format_version"] == 2 and manifest["counts"]["sessions"] == 3
        assert all(info.date_time[0] >= 2020 for info in opened.infolist())  # real dates, not 1980
        assert not any(made["token"] in opened.read(name).decode("latin-1") for name in opened.namelist())

    project_delete(project=world.project)  # the old deployment is gone: slug, session ids, share hashes free
    out = io.StringIO()
    call_command("import_project", str(archive), stdout=out)
    assert "member not restored, invite them again: victor@example.com (viewer): address unverified" in out.getvalue()

    with scopes_disabled():
        imported = Project.objects.get(slug="acme-api")
        keys = [
            key for s in Session.objects.filter(project=imported) for key in (s.raw_storage_key, s.content_storage_key)
        ]
        parts = [p["key"] for s in Session.objects.filter(project=imported) for p in s.subagents]
    assert imported.pk != world.project.pk and len(parts) == 1
    # every blob under the new project's prefix, which was empty before the import
    assert all(key.startswith(f"{imported.pk}/") and blobs.get(key) for key in keys + parts)

    after = _answers(api_as, world.admin, "acme-api", made["checkpoint"])
    assert before["search"]["results"]  # the search vector came along
    for name in ("sessions", "search", "insights", "messages", "attribution"):
        assert after[name] == before[name], name
    assert _members(after) == [m for m in _members(before) if m["user"]["email"] != "victor@example.com"]
    assert _trail(imported)[: len(trail)] == trail and _trail(imported)[-1][0] == "project.imported"
    page = Client().get(f"/share/{made['token']}")
    assert page.status_code == 200 and before["sessions"]["results"][-1]["title"] in page.content.decode()


def _members(answers: dict[str, Any]) -> list[dict[str, Any]]:
    """The members list without the membership ids, which are this deployment's."""
    return [{k: v for k, v in row.items() if k != "id"} for row in answers["members"]]


def _rewritten(source: Path, target: Path, change) -> Path:
    """A copy of the archive with ``change(name, data) -> data`` applied to each file."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            new.writestr(info, change(info.filename, old.read(info.filename)))
    return target


def _nothing_written(before_projects: int, before_sessions: int, prefixes: set[str]) -> None:
    with scopes_disabled():
        assert (Project.objects.count(), Session.objects.count()) == (before_projects, before_sessions)
    assert _bucket_prefixes() == prefixes


def test_a_copy_under_another_slug_gets_new_ids_and_skips_share_links_in_use(world, ingest, api_as, tmp_path) -> None:
    made = _project_built(world, ingest, api_as)
    archive = _export(api_as, world.admin, "acme-api", tmp_path / "acme.zip")
    out = io.StringIO()
    call_command("import_project", str(archive), "--slug", "acme-copy", stdout=out)
    assert "3 session(s) (3 given new ids)" in out.getvalue() and "1 share link(s) skipped" in out.getvalue()
    with scopes_disabled():
        copy = Project.objects.get(slug="acme-copy")
        assert copy.repo is None or copy.repo != world.project.repo
        copied = Session.objects.get(project=copy, commit_hash=SHA)
    original = _answers(api_as, world.admin, "acme-api", made["checkpoint"])
    answered = _answers(api_as, world.admin, "acme-copy", copied.pk)
    assert answered["messages"] == original["messages"]
    assert [s["title"] for s in answered["sessions"]["results"]] == [
        s["title"] for s in original["sessions"]["results"]
    ]
    records = answered["attribution"]["records"]
    assert len(records) == 1 and records[0]["vcs"]["revision"] == SHA


@pytest.mark.parametrize(
    "attack", ["one_byte_of_a_transcript", "an_unlisted_file", "a_newer_format", "a_first_format_archive"]
)
def test_an_altered_archive_is_refused_and_writes_nothing(world, ingest, api_as, tmp_path, attack: str) -> None:
    _project_built(world, ingest, api_as)
    archive = _export(api_as, world.admin, "acme-api", tmp_path / "acme.zip")

    def change(name: str, data: bytes) -> bytes:
        if attack == "one_byte_of_a_transcript" and name.endswith("/raw.jsonl.gz"):
            raw = bytearray(gzip.decompress(data))
            raw[10] ^= 1
            return gzip.compress(bytes(raw))
        if attack == "a_newer_format" and name == "manifest.json":
            return json.dumps({**json.loads(data), "format_version": 99, "product_version": "9.0"}).encode()
        return data

    altered = _rewritten(archive, tmp_path / "altered.zip", change)
    if attack == "a_first_format_archive":  # what the export wrote before it had a manifest
        with zipfile.ZipFile(archive) as old, zipfile.ZipFile(altered, "w") as first:
            first.writestr("sessions.jsonl", old.read("sessions.jsonl"))
    if attack == "an_unlisted_file":
        with zipfile.ZipFile(altered, "a") as opened:
            opened.writestr("sessions/extra/raw.jsonl.gz", gzip.compress(b"{}"))
    with scopes_disabled():
        counts = (Project.objects.count(), Session.objects.count())
    prefixes = _bucket_prefixes()
    expected = {
        "one_byte_of_a_transcript": "does not match its SHA-256 in manifest.json",
        "an_unlisted_file": "does not match its manifest: unlisted ['sessions/extra/raw.jsonl.gz']",
        "a_newer_format": "format version 99, newer than this Sessionledger reads (up to 2); upgrade",
        "a_first_format_archive": "from before format version 2, which cannot be imported (export the project again)",
    }[attack]
    with pytest.raises(CommandError, match=re.escape(expected)):
        call_command("import_project", str(altered), "--slug", "acme-altered")
    _nothing_written(*counts, prefixes)


def _first_row(data: bytes, **changes: Any) -> bytes:
    return json.dumps({**json.loads(data.splitlines()[0]), **changes}).encode() + b"\n"


@pytest.mark.parametrize(
    ("part", "changes", "refusal"),
    [
        ("attributions.jsonl", {"session_id": "00000000-0000-4000-8000-000000000000"}, "rows do not hold together"),
        ("members.jsonl", {"role": "owner"}, "gives alice@example.com an unknown role 'owner'"),
    ],
)
def test_rows_that_do_not_hold_together_leave_no_blobs_behind(
    world, ingest, api_as, tmp_path, part: str, changes: dict[str, str], refusal: str
) -> None:
    """Checksums recomputed, so only the restore itself can notice: an attribution of no session in
    the archive, a role that does not exist. The blobs uploaded before the rows are deleted again."""
    _project_built(world, ingest, api_as)
    archive = _export(api_as, world.admin, "acme-api", tmp_path / "acme.zip")
    files: dict[str, bytes] = {}

    def change(name: str, data: bytes) -> bytes:
        if name == part:
            data = _first_row(data, **changes)
        if name == "manifest.json":  # the last file: sums of the changed files
            manifest = json.loads(data)
            manifest["files"] = {
                n: {"sha256": hashlib.sha256(d).hexdigest(), "bytes": len(d)} for n, d in files.items()
            }
            return json.dumps(manifest).encode()
        files[name] = data
        return data

    broken = _rewritten(archive, tmp_path / "broken.zip", change)
    with scopes_disabled():
        counts = (Project.objects.count(), Session.objects.count())
    prefixes = _bucket_prefixes()
    with pytest.raises(CommandError, match=re.escape(refusal)):
        call_command("import_project", str(broken), "--slug", "acme-broken")
    _nothing_written(*counts, prefixes)

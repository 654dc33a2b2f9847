"""A project admin downloads everything of a project as one zip: every session's metadata as JSONL
and the raw transcripts as stored; nothing of another project."""

from __future__ import annotations

import gzip
import io
import json
import zipfile

from django_scopes import scopes_disabled

from projects.models import AuditEvent
from tests.conftest import conversation


def test_an_admin_downloads_metadata_and_raw_transcripts_as_a_zip(world, ingest, api_as) -> None:
    sessions = [ingest(world.project, world.member, f"prompt {n}", seed=f"x{n}") for n in range(3)]
    ingest(world.other_project, world.other_admin, "someone else's secret")
    url = f"/api/v1/projects/{world.project.slug}/export"
    started = api_as(world.admin).post(url)
    assert started.status_code == 202
    assert started.json()["url"] == f"http://testserver{url}"
    response = api_as(world.admin).get(url)
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    lines = [json.loads(line) for line in archive.read("sessions.jsonl").splitlines()]
    assert {line["id"] for line in lines} == {str(s.pk) for s in sessions}
    for session in sessions:
        raw = gzip.decompress(archive.read(f"sessions/{session.pk}/raw.jsonl.gz"))
        assert raw == conversation(session.title) or session.title.encode() in raw
    assert not any(b"someone else" in archive.read(name) for name in archive.namelist() if name.endswith(".gz"))
    with scopes_disabled():
        [event] = AuditEvent.objects.filter(kind="project.exported")
    assert (event.actor_email, event.project_slug, event.via) == ("alice@example.com", world.project.slug, "api")


def test_only_admins_export_and_outsiders_get_404(world, api_as) -> None:
    url = f"/api/v1/projects/{world.project.slug}/export"
    assert api_as(world.outsider).get(url).status_code == 404
    assert api_as(world.other_admin).post(url).status_code == 404
    assert api_as(world.member).get(url).status_code == 403
    assert api_as(world.viewer).post(url).status_code == 403

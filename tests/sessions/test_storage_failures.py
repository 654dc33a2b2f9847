"""The bucket down or missing a blob, as a reader sees it: an export is refused with a 503 before any
byte of a zip is sent, or cut visibly when the bucket fails mid-stream; a blob the bucket lost is a
404 of the right kind (JSON for the API, a page for the browser), never an HTML 500."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from projects.scoping import project_scope
from sessions_app import blobs
from sessions_app.export import project_zip
from tests.e2e.tcp_proxy import Blackhole, OutageProxy, s3_storage_at


@pytest.fixture
def blackhole_bucket(settings):
    """``blackhole_bucket()``: from now on the bucket accepts connections and never answers."""
    hole = Blackhole()

    def blackhole() -> None:
        settings.STORAGES = {**settings.STORAGES, "blobs": s3_storage_at(f"http://127.0.0.1:{hole.port}")}

    yield blackhole
    hole.close()


def test_an_export_with_the_bucket_down_is_a_json_503_not_a_200(world, ingest, api_as, blackhole_bucket) -> None:
    ingest(world.project, world.member, "kept")
    blackhole_bucket()
    response = api_as(world.admin).get(f"/api/v1/projects/{world.project.slug}/export")
    assert response.status_code == 503 and response["Retry-After"]
    assert response.json()["error"]["code"] == "storage_unavailable"


def test_the_export_page_with_the_bucket_down_is_a_503_page(world, ingest, client, blackhole_bucket) -> None:
    ingest(world.project, world.member, "kept")
    blackhole_bucket()
    client.force_login(world.admin)
    response = client.get(f"/p/{world.project.slug}/settings/export")
    assert response.status_code == 503 and b"Temporarily unavailable" in response.content


def test_a_bucket_failing_mid_export_cuts_the_stream_instead_of_finishing_the_zip(world, ingest, settings) -> None:
    for n in range(2):
        ingest(world.project, world.member, f"part {n}", seed=f"cut{n}")
    endpoint = settings.STORAGES["blobs"]["OPTIONS"]["endpoint_url"].removeprefix("http://")
    host, port = endpoint.split(":")
    proxy = OutageProxy((host, int(port)))
    settings.STORAGES = {**settings.STORAGES, "blobs": s3_storage_at(f"http://127.0.0.1:{proxy.port}")}
    received = bytearray()
    with project_scope(world.project), pytest.raises(blobs.StorageUnavailable):
        for chunk in project_zip(world.project):
            received += chunk
            if b"raw.jsonl.gz" in received:  # the first stored part is on its way: the bucket goes away
                proxy.outage()
    with pytest.raises(zipfile.BadZipFile):
        zipfile.ZipFile(io.BytesIO(bytes(received)))


def test_a_part_the_bucket_lost_is_listed_in_the_export(world, ingest, api_as) -> None:
    kept, lost = ingest(world.project, world.member, "kept"), ingest(world.project, world.member, "lost", seed="l")
    blobs.delete(lost.raw_storage_key)
    response = api_as(world.admin).get(f"/api/v1/projects/{world.project.slug}/export")
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    assert f"sessions/{kept.pk}/raw.jsonl.gz" in archive.namelist()
    missing = [json.loads(line) for line in archive.read("missing.jsonl").splitlines()]
    assert missing == [{"session": str(lost.pk), "part": f"sessions/{lost.pk}/raw.jsonl.gz"}]


def test_a_raw_transcript_the_bucket_lost_is_a_json_404_from_the_api(world, ingest, api_as) -> None:
    session = ingest(world.project, world.member, "lost")
    blobs.delete(session.raw_storage_key)
    response = api_as(world.member).get(f"/api/v1/projects/{world.project.slug}/sessions/{session.pk}/raw")
    assert response.status_code == 404 and response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "content_missing"


def test_a_content_document_the_bucket_lost_is_a_json_404_from_the_api(world, ingest, api_as) -> None:
    session = ingest(world.project, world.member, "lost")
    blobs.delete(session.content_storage_key)
    response = api_as(world.member).get(f"/api/v1/projects/{world.project.slug}/sessions/{session.pk}/messages")
    assert response.status_code == 404 and response.json()["error"]["code"] == "content_missing"


def test_a_transcript_with_the_bucket_down_is_a_json_503(world, ingest, api_as, blackhole_bucket) -> None:
    session = ingest(world.project, world.member, "kept")
    blackhole_bucket()
    response = api_as(world.member).get(f"/api/v1/projects/{world.project.slug}/sessions/{session.pk}/messages")
    assert response.status_code == 503 and response.json()["error"]["code"] == "storage_unavailable"

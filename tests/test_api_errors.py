"""Errors an API client can act on (docs/api.md "Errors"): storage down is the documented JSON 503 on
reads too, a validation refusal lists every invalid field, and the served OpenAPI document is valid."""

from __future__ import annotations

import pytest
from openapi_spec_validator import validate

STORAGE_DOWN = {
    "BACKEND": "storages.backends.s3.S3Storage",
    "OPTIONS": {"bucket_name": "x", "endpoint_url": "http://127.0.0.1:9", "access_key": "a", "secret_key": "b"},
}


@pytest.fixture
def session_id(world, ingest) -> str:
    return str(ingest(world.project, world.member, "Add capture").pk)


@pytest.mark.parametrize("read", ["messages", "raw"])
def test_reading_a_transcript_while_storage_is_down_is_a_json_503_not_an_html_500(
    world, api_as, session_id, settings, read: str
) -> None:
    settings.STORAGES = {**settings.STORAGES, "blobs": STORAGE_DOWN}
    response = api_as(world.viewer).get(f"/api/v1/projects/{world.project.slug}/sessions/{session_id}/{read}")
    assert response.status_code == 503
    assert response["Content-Type"].startswith("application/json")
    assert int(response["Retry-After"]) > 0
    error = response.json()["error"]
    assert error["code"] == "storage_unavailable"
    assert "127.0.0.1" not in error["message"]  # where storage lives is for the log, not the caller


def test_a_validation_refusal_lists_every_invalid_field(world, api_as) -> None:
    response = api_as(world.viewer).get(
        f"/api/v1/projects/{world.project.slug}/sessions", {"since": "yesterday-ish", "kind": "bogus"}
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert {item["field"] for item in error["errors"]} >= {"since", "kind"}
    assert error["field"] in {"since", "kind"}  # the first one keeps its place for older clients
    assert all(item["code"] and item["message"] for item in error["errors"])


def test_the_served_openapi_document_passes_the_openapi_validator(db, client) -> None:
    response = client.get("/api/v1/schema", {"format": "json"})
    assert response.status_code == 200
    validate(response.json())

"""Ingest: what a client sees for good and bad uploads (docs/design.md §3)."""

from __future__ import annotations

import gzip
import io
import json
import resource
import zlib
from collections.abc import Callable

import pytest
from django_scopes import scopes_disabled

from sessions_app import blobs
from sessions_app.models import Session, Status
from tests.client.transcript_builder import TranscriptBuilder
from tests.uploads import commit_hash, metadata_for, upload
from tests.work import assert_bounded

RAW = TranscriptBuilder().prompt("Add capture").assistant_text("Done.").turn_end().build()


def _sessions() -> list[Session]:
    with scopes_disabled():
        return list(Session.objects.all())


def test_an_upload_is_accepted_once_its_blob_is_stored(world, api_as) -> None:
    response = upload(api_as(world.member), world.project.slug, RAW)
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "processing" and body["url"].endswith(f"/sessions/{body['id']}")
    [session] = _sessions()
    assert str(session.pk) == body["id"] and session.author == world.member
    assert session.raw_storage_key == f"{world.project.pk}/{session.pk}/raw.jsonl.gz"
    assert gzip.decompress(blobs.get(session.raw_storage_key)) == RAW
    assert session.raw_size_bytes == len(RAW) and session.commit_message.startswith("Add session capture")


def test_repeating_an_idempotency_key_returns_the_same_session(world, api_as) -> None:
    client = api_as(world.member)
    first = upload(client, world.project.slug, RAW, **{"Idempotency-Key": "k-1"})
    again = upload(
        client,
        world.project.slug,
        RAW,
        metadata_for(RAW, commit_hash=commit_hash("other")),
        **{"Idempotency-Key": "k-1"},
    )
    assert (first.status_code, again.status_code) == (202, 200)
    assert first.json()["id"] == again.json()["id"]
    assert len(_sessions()) == 1


def test_the_same_segment_sent_twice_is_a_duplicate_not_a_conflict(world, api_as) -> None:
    client = api_as(world.member)
    first = upload(client, world.project.slug, RAW)
    again = upload(client, world.project.slug, RAW)
    assert (first.status_code, again.status_code) == (202, 200)
    assert len(_sessions()) == 1


def test_a_different_upload_for_a_checkpointed_commit_is_a_409_pointing_at_it(world, api_as) -> None:
    client = api_as(world.member)
    first = upload(client, world.project.slug, RAW).json()
    other = metadata_for(RAW, agent_session_id="another-conversation")
    response = upload(client, world.project.slug, RAW, other)
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "conflict" and error["url"] == first["url"]
    assert len(_sessions()) == 1


@pytest.mark.parametrize(
    ("metadata_text", "field"),
    [
        ("{not json", "metadata"),
        ("[1, 2]", "metadata"),
        (json.dumps({"kind": "checkpoint", "commit_hash": "xyz"}), "commit_hash"),
        (json.dumps({"kind": "task"}), "task_id"),
        (json.dumps({"kind": "checkpoint", "commit_hash": commit_hash("a"), "agent": "vim"}), "agent"),
    ],
)
def test_malformed_metadata_is_a_400_naming_the_field(world, api_as, metadata_text: str, field: str) -> None:
    response = upload(api_as(world.member), world.project.slug, RAW, metadata_text=metadata_text)
    assert response.status_code == 400
    assert response.json()["error"]["field"] == field
    assert _sessions() == []


def test_a_transcript_that_is_not_gzip_is_a_400(world, api_as) -> None:
    part = io.BytesIO(RAW)
    part.name = "transcript.jsonl"
    response = upload(api_as(world.member), world.project.slug, RAW, transcript_part=part)
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_gzip"


def test_a_truncated_gzip_is_a_400_and_stores_nothing(world, api_as) -> None:
    part = io.BytesIO(gzip.compress(RAW * 50)[:-30])
    part.name = "transcript.jsonl.gz"
    response = upload(api_as(world.member), world.project.slug, RAW, transcript_part=part)
    assert response.status_code == 400 and "truncated" in response.json()["error"]["message"]
    assert _sessions() == []


def _bomb(mib: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(1 << 24)
    return b"".join(compressor.compress(zeros) for _ in range(mib // 16)) + compressor.flush()


def test_a_decompression_bomb_is_refused_with_413_without_inflating_it(world, api_as) -> None:
    def refused(body: bytes) -> Callable[[], None]:
        def run() -> None:
            part = io.BytesIO(body)
            part.name = "transcript.jsonl.gz"
            response = upload(api_as(world.member), world.project.slug, RAW, transcript_part=part)
            assert response.status_code == 413
            assert response.json()["error"]["limit"] == 10 * 1024 * 1024

        return run

    gib = _bomb(1024)
    assert len(gib) < 2 * 1024 * 1024  # 1 GiB of zeros, compressed
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    refused(gib)()
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before < 200 * 1024  # KiB
    # Work, not time (tests/work.py): a 64 MiB bomb runs the same lines of ours as a 32 MiB one;
    # inflating it all would run them once more per 64 KiB piece.
    assert_bounded(lambda mib: refused(_bomb(mib)), 32)
    assert _sessions() == []


def test_a_transcript_over_the_configured_limit_is_a_413_that_says_the_limit(world, api_as, settings) -> None:
    settings.SESSIONLEDGER_MAX_RAW_BYTES = 100
    response = upload(api_as(world.member), world.project.slug, RAW)
    assert response.status_code == 413
    assert "100 bytes" in response.json()["error"]["message"]


def test_a_request_body_over_the_upload_limit_is_refused_before_reading_it(world, api_as, settings) -> None:
    settings.SESSIONLEDGER_MAX_UPLOAD_BYTES = 50
    response = upload(api_as(world.member), world.project.slug, RAW)
    assert response.status_code == 413


def test_json_instead_of_multipart_is_a_415(world, api_as) -> None:
    response = api_as(world.member).post(
        f"/api/v1/projects/{world.project.slug}/sessions", {"metadata": {}}, format="json"
    )
    assert response.status_code == 415 and "error" in response.json()


@pytest.mark.parametrize(
    ("role", "token_options", "status"),
    [
        ("viewer", {}, 403),
        ("outsider", {}, 404),
        ("anonymous", {}, 401),
        ("member", {"scopes": ["read"]}, 403),
    ],
)
def test_who_may_not_upload(world, api_as, role: str, token_options: dict, status: int) -> None:
    response = upload(api_as(world.user(role), **token_options), world.project.slug, RAW)
    assert response.status_code == status
    assert set(response.json()["error"]) == {"code", "message", "field"}
    assert _sessions() == []


def test_uploading_to_a_project_that_does_not_exist_is_a_404(world, api_as) -> None:
    assert upload(api_as(world.member), "nope", RAW).status_code == 404


def test_storage_down_is_a_503_with_retry_after_and_no_row(world, api_as, settings) -> None:
    settings.STORAGES = {
        **settings.STORAGES,
        "blobs": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {"bucket_name": "x", "endpoint_url": "http://127.0.0.1:9", "access_key": "a", "secret_key": "b"},
        },
    }
    response = upload(api_as(world.member), world.project.slug, RAW)
    assert response.status_code == 503
    assert int(response["Retry-After"]) > 0 and response.json()["error"]["code"] == "storage_unavailable"
    assert _sessions() == []


def test_a_task_session_carries_its_final_status(world, api_as) -> None:
    metadata = metadata_for(RAW, kind="task", task_id="SL-42", status="rejected", commit_hash=None)
    response = upload(api_as(world.member), world.project.slug, RAW, metadata)
    assert response.status_code == 202
    [session] = _sessions()
    assert (session.task_id, session.status, session.requested_status) == ("SL-42", Status.PROCESSING, "rejected")


def test_a_following_segment_links_to_the_previous_one(world, api_as) -> None:
    client = api_as(world.member)
    upload(client, world.project.slug, RAW)
    more = metadata_for(RAW, commit_hash=commit_hash("c2"), start_offset=len(RAW), end_offset=2 * len(RAW))
    second = upload(client, world.project.slug, RAW, more).json()
    with scopes_disabled():
        session = Session.objects.get(pk=second["id"])
        assert session.previous is not None and session.previous.end_offset == len(RAW)

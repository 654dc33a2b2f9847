"""Resumable uploads on the server (docs/api.md "Resumable uploads"): a body sent in parts becomes
the session one request would have made; every step can be repeated without changing anything;
each way of getting it wrong (oversized part, another user's token, missing parts, storage down)
is a clear refusal that loses nothing."""

from __future__ import annotations

import hashlib
import json
import os
from datetime import timedelta

import pytest
from django.test.client import encode_multipart
from django.utils import timezone
from django_scopes import scopes_disabled

from sessions_app import blobs, resumable
from sessions_app.models import PartialUpload, Session
from sessions_app.tasks import apply_retention
from tests.conftest import conversation
from tests.test_api_errors import STORAGE_DOWN
from tests.uploads import gz_file, metadata_for

PART = 1024
BOUNDARY = "sessionledger-resumable-test"
KEY = "sl1-resumable-test"


@pytest.fixture(autouse=True)
def _small_parts(settings) -> None:
    settings.SESSIONLEDGER_UPLOAD_PART_BYTES = PART


def form_body() -> bytes:
    """A real upload's multipart body, made incompressible enough to take several parts."""
    raw = conversation("Add capture " + os.urandom(3000).hex())
    data = {"metadata": json.dumps(metadata_for(raw)), "transcript": gz_file(raw, "transcript.jsonl.gz")}
    return encode_multipart(BOUNDARY, data)


def begin(client, body: bytes, key: str = KEY, **changes):
    fields = {
        "size": len(body),
        "sha256": hashlib.sha256(body).hexdigest(),
        "content_type": f"multipart/form-data; boundary={BOUNDARY}",
        **changes,
    }
    return client.post("/api/v1/projects/acme-api/uploads", fields, format="json", HTTP_IDEMPOTENCY_KEY=key)


def put(client, upload_id: str, index: int, data: bytes):
    url = f"/api/v1/projects/acme-api/uploads/{upload_id}/parts/{index}"
    return client.put(url, data, content_type="application/octet-stream")


def finish(client, upload_id: str):
    return client.post(f"/api/v1/projects/acme-api/uploads/{upload_id}/finish")


def pieces(body: bytes) -> list[bytes]:
    return [body[i : i + PART] for i in range(0, len(body), PART)]


def test_a_body_sent_in_parts_becomes_one_session_and_every_step_can_be_repeated(world, api_as) -> None:
    client, body = api_as(world.member), form_body()
    started = begin(client, body)
    assert started.status_code == 201, started.content
    upload = started.json()
    assert upload["parts"] == len(pieces(body)) > 3 and upload["received"] == []

    for index, data in enumerate(pieces(body)):
        assert put(client, upload["id"], index, data).status_code == 200
    again = put(client, upload["id"], 1, pieces(body)[1])  # a part re-sent after a cut
    assert again.status_code == 200 and again.json()["received_bytes"] == len(body)

    resumed = begin(client, body)  # a client that lost the id finds the same upload
    assert resumed.status_code == 200 and resumed.json()["id"] == upload["id"]
    assert resumed.json()["received"] == list(range(upload["parts"]))

    done = finish(client, upload["id"])
    assert done.status_code == 202, done.content
    repeated = finish(client, upload["id"])
    assert repeated.status_code == 200 and repeated.json()["id"] == done.json()["id"]
    with scopes_disabled():
        [session] = Session.objects.all()
    assert str(session.pk) == done.json()["id"] and session.idempotency_key == KEY


def test_a_part_longer_than_its_slot_is_refused_before_it_is_stored(world, api_as) -> None:
    client, body = api_as(world.member), form_body()
    upload = begin(client, body).json()

    oversized = put(client, upload["id"], 0, pieces(body)[0] + b"x")
    short = put(client, upload["id"], 0, pieces(body)[0][:-1])
    beyond = put(client, upload["id"], upload["parts"], b"x")

    assert oversized.status_code == 413 and oversized.json()["error"]["limit"] == PART
    assert short.status_code == 400 and short.json()["error"]["code"] == "incomplete"
    assert beyond.status_code == 400 and "does not exist" in beyond.json()["error"]["message"]
    assert api_as(world.member).get(f"/api/v1/projects/acme-api/uploads/{upload['id']}").json()["received"] == []


def test_other_bytes_for_a_stored_part_are_a_conflict(world, api_as) -> None:
    client, body = api_as(world.member), form_body()
    upload = begin(client, body).json()
    put(client, upload["id"], 0, pieces(body)[0])

    other = put(client, upload["id"], 0, bytes(PART))

    assert other.status_code == 409 and other.json()["error"]["code"] == "conflict"


def test_an_upload_is_its_authors_alone(world, api_as) -> None:
    body = form_body()
    upload = begin(api_as(world.member), body).json()

    as_admin = api_as(world.admin)  # a member of the project, with another token
    assert put(as_admin, upload["id"], 0, pieces(body)[0]).status_code == 404
    assert finish(as_admin, upload["id"]).status_code == 404
    outsider = api_as(world.other_admin)
    assert outsider.get(f"/api/v1/projects/acme-api/uploads/{upload['id']}").status_code == 404
    as_viewer = api_as(world.viewer).post("/api/v1/projects/acme-api/uploads", {}, HTTP_IDEMPOTENCY_KEY=KEY)
    assert as_viewer.status_code == 403


def test_finishing_with_parts_missing_names_them_and_keeps_the_others(world, api_as) -> None:
    client, body = api_as(world.member), form_body()
    upload = begin(client, body).json()
    for index, data in enumerate(pieces(body)):
        if index not in (1, 3):
            put(client, upload["id"], index, data)

    early = finish(client, upload["id"])

    assert early.status_code == 409
    assert early.json()["error"]["code"] == "missing_parts" and early.json()["error"]["missing"] == [1, 3]
    put(client, upload["id"], 1, pieces(body)[1])
    put(client, upload["id"], 3, pieces(body)[3])
    assert finish(client, upload["id"]).status_code == 202


def test_parts_that_join_into_other_bytes_than_declared_are_dropped(world, api_as) -> None:
    client, body = api_as(world.member), form_body()
    upload = begin(client, body, sha256="0" * 64).json()
    for index, data in enumerate(pieces(body)):
        put(client, upload["id"], index, data)

    refused = finish(client, upload["id"])

    assert refused.status_code == 400 and refused.json()["error"]["code"] == "checksum_mismatch"
    assert client.get(f"/api/v1/projects/acme-api/uploads/{upload['id']}").json()["received"] == []


def test_a_declaration_the_server_would_not_take_in_one_request_is_refused(world, api_as, settings) -> None:
    client, body = api_as(world.member), form_body()
    too_big = begin(client, body, size=settings.SESSIONLEDGER_MAX_UPLOAD_BYTES + 1)
    no_key = client.post("/api/v1/projects/acme-api/uploads", {"size": 1}, format="json")
    not_a_form = begin(client, body, content_type="text/plain")

    assert too_big.status_code == 413 and too_big.json()["error"]["limit"] == settings.SESSIONLEDGER_MAX_UPLOAD_BYTES
    assert no_key.status_code == 400 and no_key.json()["error"]["field"] == "Idempotency-Key"
    assert not_a_form.status_code == 400 and not_a_form.json()["error"]["field"] == "content_type"


def test_storage_down_while_a_part_arrives_is_a_503_and_records_nothing(world, api_as, settings) -> None:
    client, body = api_as(world.member), form_body()
    upload = begin(client, body).json()
    settings.STORAGES = {**settings.STORAGES, "blobs": STORAGE_DOWN}

    refused = put(client, upload["id"], 0, pieces(body)[0])

    assert refused.status_code == 503 and refused.json()["error"]["code"] == "storage_unavailable"
    assert int(refused["Retry-After"]) > 0
    with scopes_disabled():
        assert PartialUpload.objects.get(pk=upload["id"]).parts == {}


def test_a_body_prepared_again_starts_a_new_upload_under_the_same_key(world, api_as) -> None:
    client, body = api_as(world.member), form_body()
    first = begin(client, body).json()
    put(client, first["id"], 0, pieces(body)[0])

    refitted = form_body()
    second = begin(client, refitted)

    assert second.status_code == 201 and second.json()["id"] != first["id"]
    with scopes_disabled():
        assert [str(pk) for pk in PartialUpload.objects.values_list("pk", flat=True)] == [second.json()["id"]]


def stored_parts(upload_id: str) -> list[str]:
    with scopes_disabled():
        upload = PartialUpload.objects.get(pk=upload_id)
    found = []
    for index in sorted(upload.parts, key=int):
        try:
            blobs.get(resumable.part_key(upload, int(index)))
        except FileNotFoundError:
            continue
        found.append(index)
    return found


def test_the_retention_run_deletes_an_abandoned_upload_and_its_parts_and_keeps_a_live_one(world, api_as) -> None:
    client = api_as(world.member)
    abandoned_body, live_body = form_body(), form_body()
    abandoned = begin(client, abandoned_body, key="sl1-abandoned").json()
    live = begin(client, live_body, key="sl1-live").json()
    for upload, body in ((abandoned, abandoned_body), (live, live_body)):
        for index in (0, 1):
            assert put(client, upload["id"], index, pieces(body)[index]).status_code == 200
    with scopes_disabled():
        keys = [resumable.part_key(PartialUpload.objects.get(pk=abandoned["id"]), i) for i in (0, 1)]
        week_ago = timezone.now() - timedelta(days=resumable.KEEP_DAYS, hours=1)
        PartialUpload.objects.filter(pk=abandoned["id"]).update(created_at=week_ago)

    apply_retention()  # hourly

    with scopes_disabled():
        assert not PartialUpload.objects.filter(pk=abandoned["id"]).exists()
    for key in keys:
        with pytest.raises(FileNotFoundError):
            blobs.get(key)
    assert stored_parts(live["id"]) == ["0", "1"]
    assert put(client, live["id"], 2, pieces(live_body)[2]).status_code == 200  # it goes on


def test_parts_storage_cannot_delete_keep_the_abandoned_upload_for_the_next_sweep(world, api_as, settings) -> None:
    client, body = api_as(world.member), form_body()
    upload = begin(client, body).json()
    put(client, upload["id"], 0, pieces(body)[0])
    with scopes_disabled():
        PartialUpload.objects.filter(pk=upload["id"]).update(created_at=timezone.now() - timedelta(days=30))
    storages = settings.STORAGES
    settings.STORAGES = {**storages, "blobs": STORAGE_DOWN}

    assert resumable.sweep_abandoned() == 0

    settings.STORAGES = storages
    assert stored_parts(upload["id"]) == ["0"]
    assert resumable.sweep_abandoned() == 1
    with scopes_disabled():
        assert not PartialUpload.objects.filter(pk=upload["id"]).exists()

"""An upload whose request is under way while its author is deactivated: a session committed after the
offboarding would be one the person stored once every access had ended (docs/security.md "Offboarding").

The upload runs through the real API in a thread, held by the real blob storage (``tests.racing``) once its
transcript is in the bucket and before its row is written; the deactivation runs meanwhile through the staff
API on another connection.
"""

from __future__ import annotations

from typing import Any

import pytest
from django_scopes import scopes_disabled

from sessions_app import blobs
from sessions_app.models import Session
from tests.conftest import conversation
from tests.factories import UserFactory
from tests.governance.test_erasure import bucket_keys
from tests.racing import HANG_GUARD, HeldWrite, in_thread, raise_any
from tests.uploads import commit_hash, metadata_for, upload

pytestmark = pytest.mark.django_db(transaction=True)  # two threads, two connections, real commits


def test_an_upload_under_way_when_its_author_is_deactivated_is_refused_and_leaves_nothing(
    world, api_as, monkeypatch
) -> None:
    uploader = api_as(world.member)
    assert uploader.get("/api/v1/projects").status_code == 200  # a token in use: its last use is recent
    staff = api_as(UserFactory(email="ops@example.com", is_staff=True))
    held = HeldWrite(lambda name: name.endswith("/raw.jsonl.gz"), stored=True)
    monkeypatch.setattr(blobs, "blob_storage", lambda: held)
    raw = conversation("Explain the billing retries")
    results: dict[str, Any] = {}
    thread = in_thread(
        lambda: upload(uploader, world.project.slug, raw, metadata_for(raw, commit_hash=commit_hash("late"))),
        results,
        "upload",
    )
    assert held.reached.wait(HANG_GUARD), results
    assert staff.post(f"/api/v1/users/{world.member.pk}/deactivate").status_code == 200
    held.released.set()
    thread.join(HANG_GUARD)
    raise_any(results)

    assert results["upload"].status_code == 401, results["upload"].content
    assert results["upload"].json()["error"]["code"] == "authentication_failed"
    with scopes_disabled():
        assert not Session.objects.filter(author=world.member).exists()
    assert bucket_keys(f"{world.project.pk}/") == []

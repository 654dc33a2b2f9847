"""Erasure while the worker is processing one of the sessions: whichever side reaches the session first,
nothing of it stays in the bucket (docs/security.md "Erasure").

The worker runs the real task (``process_session``) in a thread, held at the exact point of the race
by the real blob storage (``tests.racing``); the deletion runs through the real API in another thread
and database connection, until it is done or waits for the worker's lock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import EndpointConnectionError
from django.core.files.storage import Storage, storages
from django_scopes import scopes_disabled

from projects.scoping import project_scope
from sessions_app import blobs
from sessions_app.models import BlobDeletion, Session, Status
from sessions_app.processing import session_process
from sessions_app.services import blob_deletions_retry
from sessions_app.tasks import process_session
from tests.conftest import conversation
from tests.factories import UserFactory
from tests.governance.test_erasure import bucket_keys
from tests.racing import HANG_GUARD, HeldWrite, in_thread, raise_any, wait_until_done_or_blocked
from tests.uploads import commit_hash, metadata_for, upload

pytestmark = pytest.mark.django_db(transaction=True)  # two threads, two connections, real commits


class RefusingDeletes:
    """The real blob storage while deleting is refused (the bucket's endpoint unreachable)."""

    def __init__(self) -> None:
        self.real: Storage = storages["blobs"]

    def delete(self, name: str) -> None:
        raise EndpointConnectionError(endpoint_url="http://storage.invalid")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def _uploaded(world, api_as, prompt: str) -> Session:
    """A session as ingest leaves it for the worker, with a sub-agent part and a secret the server's
    second wall rewrites the stored transcript for."""
    raw = conversation(f"{prompt} with GITHUB_TOKEN=ghp_{'a1B2' * 9}")
    meta = metadata_for(raw, commit_hash=commit_hash(prompt))
    response = upload(api_as(world.member), world.project.slug, raw, meta, subagents={"a1": conversation("helper")})
    assert response.status_code == 202, response.content
    with scopes_disabled():
        session = Session.objects.get(pk=response.json()["id"])
    assert session.status == Status.PROCESSING and len(session.subagents) == 1
    return session


def _prefix(session: Session) -> str:
    return f"{session.project_id}/{session.pk}/"


def race(monkeypatch, session: Session, deletion: Callable[[], Any], *, stored: bool) -> dict[str, Any]:
    """The worker processes ``session`` and is held at the write of its content document; the deletion
    then runs until it is done or waits for the worker; then the worker goes on. Both results."""
    key = blobs.content_key(session.project_id, session.pk)
    held = HeldWrite(lambda name: name == key, stored=stored)
    monkeypatch.setattr(blobs, "blob_storage", lambda: held)
    results: dict[str, Any] = {}
    worker = in_thread(lambda: process_session.apply(args=[str(session.pk)], throw=True), results, "worker")
    assert held.reached.wait(HANG_GUARD), results
    deleter = in_thread(deletion, results, "deletion")
    wait_until_done_or_blocked(deleter, held)
    held.released.set()
    worker.join(HANG_GUARD)
    deleter.join(HANG_GUARD)
    raise_any(results)
    return results


@pytest.fixture(params=[False, True], ids=["content-being-written", "content-written-row-not-yet"])
def stored(request) -> bool:
    return request.param


def test_deleting_a_project_while_its_session_is_processed_leaves_nothing_of_it(
    world, api_as, monkeypatch, stored
) -> None:
    session = _uploaded(world, api_as, "Explain the billing retries")
    admin = api_as(world.admin)
    results = race(monkeypatch, session, lambda: admin.delete(f"/api/v1/projects/{world.project.slug}"), stored=stored)
    assert results["deletion"].status_code == 204
    assert bucket_keys(_prefix(session)) == []
    assert not BlobDeletion.objects.exists()


def test_erasing_a_person_while_their_session_is_processed_leaves_nothing_of_it(
    world, api_as, monkeypatch, stored
) -> None:
    session = _uploaded(world, api_as, "Explain the billing retries")
    staff = api_as(UserFactory(email="ops@example.com", is_staff=True))
    results = race(monkeypatch, session, lambda: staff.post(f"/api/v1/users/{world.member.pk}/erase"), stored=stored)
    assert results["deletion"].status_code == 200 and results["deletion"].json()["sessions"] == 1
    assert bucket_keys(_prefix(session)) == []
    assert not BlobDeletion.objects.exists()


def test_a_worker_that_loaded_the_session_before_the_deletion_writes_nothing_after_it(
    world, api_as, monkeypatch
) -> None:
    """The other order, with storage refusing the deletion's deletes: the worker took the row before the
    project went, and only reaches its blobs after; the outbox's hourly retry then finds every key."""
    session = _uploaded(world, api_as, "Explain the billing retries")
    with scopes_disabled():
        loaded = Session.objects.select_related("project", "author").get(pk=session.pk)  # as the task loads it
    with monkeypatch.context() as refusing:
        refusing.setattr(blobs, "blob_storage", RefusingDeletes)
        assert api_as(world.admin).delete(f"/api/v1/projects/{world.project.slug}").status_code == 204
    assert BlobDeletion.objects.exists()  # pending: storage refused
    with project_scope(loaded.project):
        session_process(session=loaded)
    blob_deletions_retry()
    assert bucket_keys(_prefix(session)) == []
    assert not BlobDeletion.objects.exists()

"""Insights numbers, the access log and retention: what the totals count, who read what, what expires."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta

from django.utils import timezone
from django_scopes import scopes_disabled

from projects.scoping import project_scope
from sessions_app import blobs
from sessions_app.models import AccessLog, BlobDeletion, Session
from sessions_app.retention import retention_apply, retention_apply_all
from tests.client.transcript_builder import TranscriptBuilder

MONDAY = datetime(2026, 3, 2, 10, tzinfo=UTC)


UNREACHABLE_BUCKET = {
    "BACKEND": "storages.backends.s3.S3Storage",
    "OPTIONS": {"bucket_name": "x", "endpoint_url": "http://127.0.0.1:9", "access_key": "a", "secret_key": "b"},
}


def _turns(n: int, *, errors: int = 0) -> bytes:
    builder = TranscriptBuilder()
    for i in range(n):
        builder.prompt(f"step {i}").tool_call("Bash", {"command": "make"}, result="ok", is_error=i < errors)
        builder.assistant_text("ok").turn_end()
    return builder.build()


def _at(session: Session, when: datetime) -> Session:
    with scopes_disabled():
        Session.objects.filter(pk=session.pk).update(created_at=when, captured_at=when)
    return session


def _fixture(world, ingest) -> None:
    """Two authors over two weeks, another project's session beside; hand-counted below."""
    _at(ingest(world.project, world.admin, raw=_turns(1), seed="a1", feature_branch="main"), MONDAY)
    _at(
        ingest(world.project, world.admin, raw=_turns(3, errors=1), seed="a2", feature_branch="feat/x"),
        MONDAY + timedelta(days=1),
    )
    _at(
        ingest(world.project, world.member, raw=_turns(5, errors=2), seed="m1", feature_branch="feat/x"),
        MONDAY + timedelta(days=8),
    )
    _at(
        ingest(
            world.project,
            world.member,
            raw=_turns(2),
            seed="t1",
            kind="task",
            task_id="SL-1",
            status="rejected",
            feature_branch="feat/x",
        ),
        MONDAY + timedelta(days=9),
    )
    _at(
        ingest(
            world.project,
            world.admin,
            raw=_turns(1),
            seed="t2",
            kind="task",
            task_id="SL-2",
            status="complete",
            feature_branch="main",
        ),
        MONDAY + timedelta(days=9),
    )
    ingest(world.other_project, world.other_admin, raw=_turns(9), seed="other")


def test_aggregates_match_hand_computed_values(world, ingest, api_as) -> None:
    _fixture(world, ingest)
    data = api_as(world.viewer).get(f"/api/v1/projects/{world.project.slug}/insights").json()
    assert data["sessions_per_author_week"] == [
        {"week": "2026-03-02", "author": world.admin.email, "sessions": 2, "turns": 4},
        {"week": "2026-03-09", "author": world.admin.email, "sessions": 1, "turns": 1},
        {"week": "2026-03-09", "author": world.member.email, "sessions": 2, "turns": 7},
    ]
    buckets = {row["turns"]: row["commits"] for row in data["turns_per_commit"]}
    assert buckets == {"0": 0, "1": 1, "2–3": 1, "4–7": 1, "8–15": 0, "16+": 0}
    assert data["tool_usage"] == [{"tool": "Bash", "calls": 12, "errors": 3, "error_rate": 0.25}]
    outcomes = {row["status"]: row["sessions"] for row in data["task_outcomes"]}
    assert outcomes == {"complete": 1, "rejected": 1, "abandoned": 0}
    assert data["busiest_branches"][0] == {"branch": "feat/x", "sessions": 3, "turns": 10}
    assert data["size"]["sessions"] == 5


def test_a_branch_filter_and_a_period_narrow_every_chart(world, ingest, api_as) -> None:
    _fixture(world, ingest)
    url = f"/api/v1/projects/{world.project.slug}/insights?branch=main&until=2026-03-08T00:00:00Z"
    data = api_as(world.viewer).get(url).json()
    assert data["size"]["sessions"] == 1 and data["tool_usage"][0]["calls"] == 1


def test_csv_export_holds_the_same_numbers_as_the_chart(world, ingest, api_as) -> None:
    _fixture(world, ingest)
    client, url = api_as(world.viewer), f"/api/v1/projects/{world.project.slug}/insights"
    chart = client.get(url).json()["busiest_branches"]
    response = client.get(f"{url}?export=busiest_branches")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [{k: str(v) for k, v in row.items()} for row in chart] == rows
    assert api_as(world.outsider).get(url).status_code == 404


def test_reading_a_session_writes_one_access_log_row(world, ingest, api_as) -> None:
    session = ingest(world.project, world.member, "audit me")
    client = api_as(world.viewer)
    client.get(f"/api/v1/projects/{world.project.slug}/sessions/{session.pk}/messages", HTTP_USER_AGENT="pytest")
    with scopes_disabled():
        [entry] = AccessLog.objects.all()
    assert (entry.user, entry.session_id, entry.via, entry.user_agent) == (world.viewer, session.pk, "api", "pytest")
    log = api_as(world.admin).get(f"/api/v1/projects/{world.project.slug}/access-log?session={session.pk}").json()
    assert [row["user"] for row in log["results"]] == [world.viewer.email]
    assert api_as(world.member).get(f"/api/v1/projects/{world.project.slug}/access-log").status_code == 403


def test_retention_deletes_exactly_the_expired_sessions_of_that_project(
    world, ingest, django_capture_on_commit_callbacks
) -> None:
    old = _at(ingest(world.project, world.member, "old"), timezone.now() - timedelta(days=40))
    fresh = ingest(world.project, world.member, "fresh")
    theirs = _at(ingest(world.other_project, world.other_admin, "theirs"), timezone.now() - timedelta(days=400))
    world.project.retention_days = 30
    world.project.save()
    with django_capture_on_commit_callbacks(execute=True):
        assert retention_apply(project=world.project) == 1
    with scopes_disabled():
        assert set(Session.objects.values_list("pk", flat=True)) == {fresh.pk, theirs.pk}
    assert not blobs.blob_storage().exists(old.raw_storage_key)
    assert not blobs.blob_storage().exists(old.content_storage_key)
    assert blobs.blob_storage().exists(theirs.raw_storage_key)


def test_an_admin_deletes_one_session_with_its_blobs(world, ingest, api_as, django_capture_on_commit_callbacks) -> None:
    session = ingest(world.project, world.member, "delete me")
    url = f"/api/v1/projects/{world.project.slug}/sessions/{session.pk}"
    assert api_as(world.member).delete(url).status_code == 403
    with django_capture_on_commit_callbacks(execute=True):
        assert api_as(world.admin).delete(url).status_code == 204
    with project_scope(world.project):
        assert not Session.objects.filter(pk=session.pk).exists()
    assert not blobs.blob_storage().exists(session.raw_storage_key)
    with scopes_disabled():
        assert [(e.user, e.via) for e in AccessLog.objects.filter(session_id=session.pk)] == [(world.admin, "delete")]


def test_a_delete_while_storage_is_down_keeps_the_blob_keys_until_a_later_run_deletes_them(
    world, ingest, api_as, settings, django_capture_on_commit_callbacks
) -> None:
    session = ingest(world.project, world.member, "delete me while the bucket is down")
    keys = {session.raw_storage_key, session.content_storage_key}
    working = settings.STORAGES
    settings.STORAGES = {**working, "blobs": UNREACHABLE_BUCKET}
    with django_capture_on_commit_callbacks(execute=True):
        response = api_as(world.admin).delete(f"/api/v1/projects/{world.project.slug}/sessions/{session.pk}")
    assert response.status_code == 204
    with scopes_disabled():
        assert not Session.objects.filter(pk=session.pk).exists()
        assert set(BlobDeletion.objects.values_list("key", flat=True)) == keys
    settings.STORAGES = working
    assert all(blobs.blob_storage().exists(key) for key in keys)  # still there: the bucket was down

    retention_apply_all()  # the hourly run retries them
    assert not any(blobs.blob_storage().exists(key) for key in keys)
    with scopes_disabled():
        assert not BlobDeletion.objects.exists()


def test_admins_set_retention_days(world, api_as) -> None:
    url = f"/api/v1/projects/{world.project.slug}"
    assert api_as(world.member).patch(url, {"retention_days": 10}, format="json").status_code == 403
    response = api_as(world.admin).patch(url, {"retention_days": 10}, format="json")
    assert response.json()["retention_days"] == 10


def test_old_access_log_rows_are_pruned_even_without_session_retention(world, ingest, api_as, settings) -> None:
    session = ingest(world.project, world.member, "read me")
    api_as(world.viewer).get(f"/api/v1/projects/{world.project.slug}/sessions/{session.pk}/messages")
    settings.SESSIONLEDGER_ACCESS_LOG_DAYS = 30
    assert world.project.retention_days is None
    with scopes_disabled():
        AccessLog.objects.update(at=timezone.now() - timedelta(days=31))
    retention_apply(project=world.project)
    with scopes_disabled():
        assert not AccessLog.objects.exists() and Session.objects.filter(pk=session.pk).exists()

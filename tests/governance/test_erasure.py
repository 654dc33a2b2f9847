"""Deletion that finishes: after a project is deleted or a person erased, neither the bucket nor the
database holds anything of them (both listed)."""

from __future__ import annotations

import os

import boto3
import pytest
from django.core.management import call_command
from django.test import Client
from django_scopes import scopes_disabled

from projects.models import ApiToken, AuditEvent, Invitation, Membership, Project, Role, User
from sessions_app.models import AccessLog, Attribution, BlobDeletion, Session, ShareLink
from tests.factories import UserFactory


def bucket_keys(prefix: str = "") -> list[str]:
    client = boto3.client(
        "s3",
        endpoint_url=os.environ["S3_ENDPOINT_URL"],
        aws_access_key_id="test",
        aws_secret_access_key="test",
        region_name="us-east-1",
    )
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=os.environ["S3_BUCKET"], Prefix=prefix)
    return [item["Key"] for page in pages for item in page.get("Contents", [])]


def keys_of(session: Session) -> set[str]:
    return {session.raw_storage_key, session.content_storage_key} - {""}


@pytest.fixture
def stocked(world, ingest, api_as):
    """Two sessions, a share link, a read and an invitation in the project; one session elsewhere."""
    ours = [ingest(world.project, world.member, "first", seed="e1"), ingest(world.project, world.admin, "second")]
    theirs = ingest(world.other_project, world.other_admin, "theirs")
    base = f"/api/v1/projects/{world.project.slug}"
    api_as(world.member).post(f"{base}/sessions/{ours[0].pk}/shares", {"days": 3}, format="json")
    api_as(world.viewer).get(f"{base}/sessions/{ours[0].pk}/messages")
    api_as(world.admin).post(f"{base}/invitations", {"email": "new@example.com", "role": "viewer"}, format="json")
    assert bucket_keys(f"{world.project.pk}/")
    return ours, theirs


def assert_project_gone(world, theirs: Session) -> None:
    assert bucket_keys(f"{world.project.pk}/") == []
    assert keys_of(theirs) <= set(bucket_keys(f"{world.other_project.pk}/"))
    pid = world.project.pk
    with scopes_disabled():
        assert not Project.objects.filter(pk=pid).exists()
        for model in (Session, Membership, Invitation, AccessLog, ShareLink, Attribution):
            assert not model.objects.filter(project_id=pid).exists(), model
        assert not BlobDeletion.objects.exists()
        assert Session.objects.filter(pk=theirs.pk).exists()
        assert AuditEvent.objects.filter(kind="project.deleted", project_id=pid).count() == 1


def test_deleting_a_project_through_the_api_leaves_nothing_of_it(
    world, stocked, api_as, django_capture_on_commit_callbacks
) -> None:
    url = f"/api/v1/projects/{world.project.slug}"
    assert api_as(world.outsider).delete(url).status_code == 404
    assert api_as(world.other_admin).delete(url).status_code == 404
    assert api_as(world.member).delete(url).status_code == 403
    with django_capture_on_commit_callbacks(execute=True):
        assert api_as(world.admin).delete(url).status_code == 204
    assert_project_gone(world, stocked[1])


def test_deleting_a_project_in_django_admin_deletes_its_blobs(
    world, stocked, django_capture_on_commit_callbacks
) -> None:
    admin = Client()
    admin.force_login(User.objects.create_superuser("root@example.com", "pw-for-tests-1"))
    with django_capture_on_commit_callbacks(execute=True):
        response = admin.post(f"/admin/projects/project/{world.project.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert_project_gone(world, stocked[1])


def test_deleting_projects_with_the_django_admin_bulk_action_deletes_their_blobs(
    world, stocked, django_capture_on_commit_callbacks
) -> None:
    admin = Client()
    admin.force_login(User.objects.create_superuser("root@example.com", "pw-for-tests-1"))
    with django_capture_on_commit_callbacks(execute=True):
        response = admin.post(
            "/admin/projects/project/",
            {"action": "delete_selected", "_selected_action": [str(world.project.pk)], "post": "yes"},
        )
    assert response.status_code == 302
    assert_project_gone(world, stocked[1])


@pytest.fixture
def person(world, ingest, api_as):
    """The member uploads in two projects, reads a colleague's session and holds a token."""
    with scopes_disabled():
        Membership.objects.create(project=world.other_project, user=world.member, role=Role.MEMBER)
    mine = [
        ingest(world.project, world.member, "my prompt about the billing secret", seed="p1"),
        ingest(world.other_project, world.member, "my other prompt", seed="p2"),
    ]
    colleague = ingest(world.project, world.admin, "the admin's own work")
    api_as(world.member).get(f"/api/v1/projects/{world.project.slug}/sessions/{colleague.pk}/messages")
    api_as(world.member).post(
        f"/api/v1/projects/{world.project.slug}/sessions/{colleague.pk}/shares", {"days": 3}, format="json"
    )
    return mine, colleague


def assert_person_gone(world, mine: list[Session], colleague: Session) -> None:
    everything = set(bucket_keys())
    for session in mine:
        assert not keys_of(session) & everything
    assert keys_of(colleague) <= everything
    email, pk = world.member.email, world.member.pk
    with scopes_disabled():
        assert not User.objects.filter(pk=pk).exists()
        assert not Session.objects.filter(pk__in=[s.pk for s in mine]).exists()
        assert not Session.objects.filter(title__icontains="billing secret").exists()
        assert not AccessLog.objects.filter(user_id=pk).exists()
        assert not ApiToken.objects.filter(user_id=pk).exists()
        assert not ShareLink.objects.filter(created_by_id=pk).exists()
        assert not Membership.objects.filter(user_id=pk).exists()
        assert Session.objects.filter(pk=colleague.pk).exists()
        assert not BlobDeletion.objects.exists()
        mentions = [e for e in AuditEvent.objects.all() if email in f"{e.actor_email} {e.target} {e.detail}"]
        assert mentions == []
        [erased] = AuditEvent.objects.filter(kind="user.erased")
        assert "billing" not in str(erased.detail) and erased.target == f"erased user #{pk}"


def test_erase_user_command_leaves_nothing_of_the_person(world, person, django_capture_on_commit_callbacks) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        call_command("erase_user", world.member.email)
    assert_person_gone(world, *person)


def test_staff_erase_api_leaves_nothing_of_the_person(
    world, person, api_as, django_capture_on_commit_callbacks
) -> None:
    staff = UserFactory(email="ops@example.com", is_staff=True)
    with django_capture_on_commit_callbacks(execute=True):
        response = api_as(staff).post(f"/api/v1/users/{world.member.pk}/erase")
    assert response.status_code == 200
    assert response.json()["sessions"] == 2
    assert_person_gone(world, *person)


def test_only_staff_may_erase_a_person(world, api_as) -> None:
    for user in (world.admin, world.outsider, world.member):
        assert api_as(user).post(f"/api/v1/users/{world.viewer.pk}/erase").status_code == 404
    assert User.objects.filter(pk=world.viewer.pk).exists()


def test_erasing_an_admin_revokes_the_invitations_they_sent(world, api_as) -> None:
    url = f"/api/v1/projects/{world.project.slug}/invitations"
    sent = api_as(world.admin).post(url, {"email": "dana@example.com", "role": "admin"}, format="json").json()
    call_command("erase_user", world.admin.email)
    invitee = Client()
    invitee.force_login(UserFactory(email="dana@example.com"))
    page = sent["url"].removeprefix("http://testserver")
    assert "was revoked" in invitee.post(page).content.decode()
    with scopes_disabled():
        assert not Membership.objects.filter(user__email="dana@example.com").exists()
        assert Invitation.objects.get(pk=sent["id"]).revoked_at is not None

"""A share link ends when the intent behind it ends: its creator leaving the project, or sharing
switched off, revokes it for good; and its secret (like an invitation's) never reaches a log line."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest
from django.test import Client
from django_scopes import scopes_disabled

from projects.models import Membership
from projects.services import invitation_create, membership_remove
from sessions_app.models import ShareLink


@pytest.fixture
def shared(world, ingest):
    return ingest(world.project, world.member, "Explain the retry policy", seed="intent")


def share(api_as, user, session) -> str:
    url = f"/api/v1/projects/{session.project.slug}/sessions/{session.pk}/shares"
    response = api_as(user).post(url, {"days": 7}, format="json")
    assert response.status_code == 201
    return response.json()["url"].rsplit("/share/", 1)[1]


def opens(token: str) -> bool:
    return Client().get(f"/share/{token}").status_code == 200


def test_a_removed_members_links_stop_working(world, api_as, shared) -> None:
    theirs, admins = share(api_as, world.member, shared), share(api_as, world.admin, shared)
    with scopes_disabled():
        membership_remove(membership=Membership.objects.get(project=world.project, user=world.member))
    assert not opens(theirs)
    assert opens(admins)  # another member's link is their own intent


def test_a_deleted_users_links_stop_working(world, api_as, shared) -> None:
    token = share(api_as, world.member, shared)
    world.member.delete()
    assert not opens(token)
    with scopes_disabled():
        assert ShareLink.objects.get().revoked_at is not None


def test_a_removed_member_rejoining_does_not_revive_their_links(world, api_as, shared) -> None:
    token = share(api_as, world.member, shared)
    with scopes_disabled():
        membership_remove(membership=Membership.objects.get(project=world.project, user=world.member))
        Membership.objects.create(project=world.project, user=world.member, role="member")
    assert not opens(token)


def test_sharing_off_then_on_again_revives_no_link(world, api_as, shared, client) -> None:
    token = share(api_as, world.member, shared)
    client.force_login(world.admin)
    settings_page = f"/p/{world.project.slug}/settings/shares"
    client.post(settings_page, {"action": "sharing", "enabled": "0"})
    client.post(settings_page, {"action": "sharing", "enabled": "1"})
    assert not opens(token)
    assert opens(share(api_as, world.member, shared))  # new links work again


@pytest.fixture
def console_log() -> Iterator[io.StringIO]:
    """What the configured console handler (settings.LOGGING) writes, captured."""
    [handler] = [handler for handler in logging.getLogger("django").handlers if type(handler) is logging.StreamHandler]
    captured = io.StringIO()
    original = handler.setStream(captured)
    try:
        yield captured
    finally:
        handler.setStream(original)


def test_a_revoked_share_links_secret_is_not_in_the_404_log(world, api_as, shared, console_log) -> None:
    token = share(api_as, world.member, shared)
    with scopes_disabled():
        ShareLink.objects.update(revoked_at="2026-01-01T00:00:00Z")
    assert Client().get(f"/share/{token}").status_code == 404
    assert Client().get(f"/share/{token}/m/1").status_code == 404
    logged = console_log.getvalue()
    assert "/share/[redacted]" in logged
    assert token not in logged


def test_an_invitation_token_is_not_in_the_404_log(world, console_log) -> None:
    with scopes_disabled():
        invitation = invitation_create(project=world.project, email="new@example.com", role="member", invited_by=None)
        invitation.revoked_at = invitation.expires_at
        invitation.save()
    Client().get(f"/invitations/{invitation.token}/")
    Client().get(f"/invitations/{invitation.token[:-1]}x/")
    logged = console_log.getvalue()
    assert invitation.token not in logged and invitation.token[:-1] not in logged


def test_an_access_line_carrying_a_share_token_is_written_without_it(console_log) -> None:
    """gunicorn's access log goes through the same handler: its line (format and arguments) loses the secret."""
    token = "A" * 43
    logging.getLogger("django.server").info("%(r)s %(s)s", {"r": f"GET /share/{token}?page=2 HTTP/1.1", "s": 200})
    logged = console_log.getvalue()
    assert token not in logged and "GET /share/[redacted]?page=2" in logged

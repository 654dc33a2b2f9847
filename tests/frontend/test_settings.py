"""``/p/{project}/settings/``: members, invitations, tokens, retention, export — admins only."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.core import mail
from django.http import StreamingHttpResponse
from django_scopes import scopes_disabled

from projects.models import ApiToken, AuditEvent, Invitation, Membership, Project, Role
from projects.tokens import hash_secret

pytestmark = pytest.mark.django_db


def _url(world) -> str:
    return f"/p/{world.project.slug}/settings/"


def _post(client, world, **data):
    client.force_login(world.admin)
    return client.post(_url(world), data, follow=True)


def _membership(world, user) -> Membership:
    with scopes_disabled():
        return Membership.objects.get(project=world.project, user=user)


def test_admins_see_members_invitations_tokens_and_retention(client, world) -> None:
    client.force_login(world.admin)
    html = client.get(_url(world)).content.decode()
    for text in ("Members", "mallory@example.com", "victor@example.com", "Invitations", "API tokens", "Retention"):
        assert text in html
    assert "bob@example.com" not in html


@pytest.mark.parametrize("role", ["member", "viewer"])
def test_non_admins_get_403(client, world, role: str) -> None:
    client.force_login(world.user(role))
    assert client.get(_url(world)).status_code == 403
    assert client.post(_url(world), {"action": "retention", "retention_days": "1"}).status_code == 403


def test_outsiders_get_404(client, world) -> None:
    client.force_login(world.outsider)
    assert client.get(_url(world)).status_code == 404


def test_the_settings_tab_is_shown_to_admins_only(client, world) -> None:
    client.force_login(world.member)
    assert _url(world) not in client.get(f"/p/{world.project.slug}/").content.decode()
    client.force_login(world.admin)
    assert _url(world) in client.get(f"/p/{world.project.slug}/").content.decode()


def test_change_a_members_role(client, world) -> None:
    membership = _membership(world, world.viewer)
    response = _post(client, world, action="change_role", membership=membership.pk, role="member")
    assert "victor@example.com is now member." in response.content.decode()
    assert _membership(world, world.viewer).role == Role.MEMBER


def test_the_last_admin_cannot_be_demoted_or_removed(client, world) -> None:
    membership = _membership(world, world.admin)
    demoted = _post(client, world, action="change_role", membership=membership.pk, role="viewer")
    assert "at least one admin" in demoted.content.decode()
    removed = _post(client, world, action="remove_member", membership=membership.pk)
    assert "at least one admin" in removed.content.decode()
    assert _membership(world, world.admin).role == Role.ADMIN


def test_remove_a_member(client, world) -> None:
    response = _post(client, world, action="remove_member", membership=_membership(world, world.member).pk)
    assert "mallory@example.com was removed" in response.content.decode()
    with scopes_disabled():
        assert not Membership.objects.filter(user=world.member, project=world.project).exists()


def test_another_projects_membership_cannot_be_touched(client, world) -> None:
    with scopes_disabled():
        foreign = Membership.objects.get(user=world.other_admin)
    client.force_login(world.admin)
    response = client.post(_url(world), {"action": "remove_member", "membership": foreign.pk})
    assert response.status_code == 404


def test_invite_sends_an_email_and_lists_a_copyable_link(client, world) -> None:
    response = _post(client, world, action="invite", email="Dana@Example.com", role="viewer")
    html = response.content.decode()
    with scopes_disabled():
        invitation = Invitation.objects.get(project=world.project, email="dana@example.com")
    link = f"http://testserver/invitations/{invitation.token}/"
    assert "Invited dana@example.com as viewer" in html and f'data-copy="{link}"' in html
    assert len(mail.outbox) == 1 and link in mail.outbox[0].body and mail.outbox[0].to == ["dana@example.com"]


def test_inviting_a_member_again_is_refused_with_a_message(client, world) -> None:
    html = _post(client, world, action="invite", email="mallory@example.com", role="member").content.decode()
    assert "already a member" in html


def test_an_invalid_invitation_form_is_shown_again_with_errors(client, world) -> None:
    client.force_login(world.admin)
    response = client.post(_url(world), {"action": "invite", "email": "not-an-email", "role": "member"})
    assert response.status_code == 400 and "Enter a valid email address." in response.content.decode()


def test_revoke_an_invitation(client, world) -> None:
    _post(client, world, action="invite", email="dana@example.com", role="member")
    with scopes_disabled():
        invitation = Invitation.objects.get(email="dana@example.com")
    html = _post(client, world, action="revoke_invitation", invitation=invitation.pk).content.decode()
    assert "was revoked" in html and "No open invitations." in html
    invitation.refresh_from_db()
    assert invitation.revoked_at is not None


def test_a_new_token_shows_its_secret_once(client, world) -> None:
    client.force_login(world.admin)
    response = client.post(
        _url(world), {"action": "create_token", "name": "ci", "scopes": ["read"], "expires_days": "30"}
    )
    html = response.content.decode()
    token = ApiToken.objects.get(name="ci")
    secret = html.split('id="new-secret" class="mono" readonly value="')[1].split('"')[0]
    assert hash_secret(secret) == token.secret_hash and response["Cache-Control"] == "no-store"
    assert token.project_id == world.project.pk and token.scopes == ["read"] and token.user == world.admin
    again = client.get(_url(world)).content.decode()
    assert secret not in again and token.prefix in again


def test_revoke_a_token(client, world) -> None:
    client.force_login(world.admin)
    client.post(_url(world), {"action": "create_token", "name": "ci", "scopes": ["read", "write"]})
    token = ApiToken.objects.get(name="ci")
    html = _post(client, world, action="revoke_token", token=token.pk).content.decode()
    token.refresh_from_db()
    assert "was revoked" in html and token.revoked_at is not None


def test_tokens_of_other_projects_are_neither_listed_nor_revocable(client, world, api_as) -> None:
    from projects import services

    foreign, _ = services.token_create(user=world.other_admin, name="globex-ci", project=world.other_project)
    client.force_login(world.admin)
    assert "globex-ci" not in client.get(_url(world)).content.decode()
    assert client.post(_url(world), {"action": "revoke_token", "token": foreign.pk}).status_code == 404


def test_set_and_clear_retention(client, world) -> None:
    assert "kept for 90 days" in _post(client, world, action="retention", retention_days="90").content.decode()
    assert Project.objects.get(pk=world.project.pk).retention_days == 90
    assert "kept forever" in _post(client, world, action="retention", retention_days="").content.decode()
    assert Project.objects.get(pk=world.project.pk).retention_days is None


def test_an_unknown_action_is_a_message_not_an_error(client, world) -> None:
    assert "Unknown action." in _post(client, world, action="drop_tables").content.decode()


def test_an_admin_downloads_the_whole_project_from_the_settings_page(client, world, ingest) -> None:
    session = ingest(world.project, world.member, "export me")
    client.force_login(world.admin)
    export_url = f"/p/{world.project.slug}/settings/export"
    assert f'href="{export_url}"' in client.get(_url(world)).content.decode()
    response = client.get(export_url)
    assert isinstance(response, StreamingHttpResponse)  # sent while it is built, whatever the size
    assert response["Content-Disposition"] == 'attachment; filename="acme-api-export.zip"'
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    assert f"sessions/{session.pk}/raw.jsonl.gz" in archive.namelist()
    assert str(session.pk) in archive.read("sessions.jsonl").decode()
    with scopes_disabled():
        [event] = AuditEvent.objects.filter(kind="project.exported")
    assert (event.actor_email, event.project_slug, event.via) == ("alice@example.com", "acme-api", "web")


@pytest.mark.parametrize(("role", "status"), [("member", 403), ("viewer", 403), ("outsider", 404)])
def test_only_admins_can_download_the_export(client, world, role: str, status: int) -> None:
    client.force_login(world.user(role))
    assert client.get(f"/p/{world.project.slug}/settings/export").status_code == status
    with scopes_disabled():
        assert not AuditEvent.objects.filter(kind="project.exported").exists()

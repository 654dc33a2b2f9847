"""Only deployment staff bind a forge repository to a project."""

from __future__ import annotations

from integrations.models import ForgeCommentSettings, ForgeInstallation, RepositoryBinding
from projects.models import AuditEvent
from projects.scoping import unscoped


def test_a_project_admin_cannot_bind_a_repository_and_staff_can(world, api_as) -> None:
    installation = ForgeInstallation.objects.create(forge="github", external_id="1001", account="acme")
    body = {
        "installation": installation.pk,
        "repository_id": "186853002",
        "full_name": "acme/api",
        "project": "acme-api",
    }

    assert api_as(world.admin).post("/api/v1/forge-bindings", body, format="json").status_code == 404
    assert not RepositoryBinding.objects.exists()

    world.outsider.is_staff = True
    world.outsider.save()
    response = api_as(world.outsider).post("/api/v1/forge-bindings", body, format="json")
    assert response.status_code == 201, response.content
    assert RepositoryBinding.objects.get().project == world.project
    with unscoped():
        assert AuditEvent.objects.filter(kind="forge.binding_created", project_id=world.project.pk).exists()
    again = api_as(world.outsider).post("/api/v1/forge-bindings", body, format="json")
    assert again.status_code == 400


def test_only_a_project_admin_lets_titles_and_prompts_into_its_pr_comments(world, api_as) -> None:
    url = f"/api/v1/projects/{world.project.slug}/forge-comment"
    assert api_as(world.member).get(url).json() == {"show_titles_and_prompts": False}  # the default
    on = {"show_titles_and_prompts": True}
    assert api_as(world.member).put(url, on, format="json").status_code == 403
    assert api_as(world.other_admin).put(url, on, format="json").status_code == 404
    assert api_as(world.admin).put(url, {"show_titles_and_prompts": "maybe"}, format="json").status_code == 400
    assert api_as(world.admin).get(url).json() == {"show_titles_and_prompts": False}
    assert api_as(world.admin).put(url, on, format="json").json() == on
    assert api_as(world.viewer).get(url).json() == on
    with unscoped():
        assert ForgeCommentSettings.objects.get().project == world.project
        assert (
            AuditEvent.objects.filter(kind="forge.comment_settings_changed", project_id=world.project.pk).count() == 1
        )

"""Only deployment staff bind a forge repository to a project."""

from __future__ import annotations

from integrations.models import ForgeInstallation, RepositoryBinding
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

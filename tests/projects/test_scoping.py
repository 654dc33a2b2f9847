"""Tenancy is fail-closed: tenant models refuse to be queried outside a project scope."""

from __future__ import annotations

import pytest
from django_scopes import ScopeError

from projects import services
from projects.models import Invitation, Membership
from projects.scoping import project_scope, unscoped

TENANT_MODELS = [Membership, Invitation]


@pytest.fixture
def invited(world):
    """One open invitation in each project, next to the world's memberships."""
    for project, admin in ((world.project, world.admin), (world.other_project, world.other_admin)):
        with project_scope(project):
            services.invitation_create(
                project=project, email=f"new@{project.slug}.example", role="member", invited_by=admin
            )
    return world


@pytest.mark.parametrize("model", TENANT_MODELS, ids=lambda m: m.__name__)
@pytest.mark.parametrize(
    "query",
    [
        lambda m: list(m.objects.all()),
        lambda m: m.objects.count(),
        lambda m: m.objects.filter(pk=1).exists(),
        lambda m: m.objects.first(),
        lambda m: m.objects.get(pk=1),
    ],
    ids=["all", "count", "filter", "first", "get"],
)
def test_a_query_outside_a_scope_raises_scope_error(invited, model, query) -> None:
    with pytest.raises(ScopeError, match="project"):
        query(model)


def test_inside_a_project_scope_only_that_projects_memberships_are_visible(invited) -> None:
    with project_scope(invited.project):
        visible = list(Membership.objects.select_related("user"))
    assert {m.user.email for m in visible} == {invited.admin.email, invited.member.email, invited.viewer.email}
    assert {m.project_id for m in visible} == {invited.project.pk}


def test_inside_a_project_scope_only_that_projects_invitations_are_visible(invited) -> None:
    with project_scope(invited.other_project):
        visible = list(Invitation.objects.all())
    assert [i.email for i in visible] == [f"new@{invited.other_project.slug}.example"]


def test_another_projects_row_is_not_found_by_id_inside_a_scope(invited) -> None:
    with unscoped():
        theirs = Membership.objects.get(user=invited.other_admin)
    with project_scope(invited.project):
        assert not Membership.objects.filter(pk=theirs.pk).exists()
        with pytest.raises(Membership.DoesNotExist):
            Membership.objects.get(pk=theirs.pk)


def test_unscoped_sees_every_projects_rows(invited) -> None:
    with unscoped():
        assert Membership.objects.count() == 4
        assert {i.project_id for i in Invitation.objects.all()} == {invited.project.pk, invited.other_project.pk}


def test_leaving_a_scope_closes_it_again(invited) -> None:
    with project_scope(invited.project):
        assert Membership.objects.count() == 3
    with pytest.raises(ScopeError):
        Membership.objects.count()

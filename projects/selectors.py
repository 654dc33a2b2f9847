"""Reads for projects and their members; always restricted to what the caller may see."""

from __future__ import annotations

from django.db.models import QuerySet

from projects.models import ApiToken, Invitation, Membership, Project, User
from projects.services import normalise_repo


def project_list(*, user: User, repo: str | None = None, token: ApiToken | None = None) -> QuerySet[Project]:
    projects = Project.objects.filter(memberships__user=user)
    if token is not None and token.project_id is not None:
        projects = projects.filter(pk=token.project_id)
    if repo:
        projects = projects.filter(repo=normalise_repo(repo))
    return projects.order_by("slug")


def membership_list(*, project: Project) -> QuerySet[Membership]:
    return Membership.objects.filter(project=project).select_related("user").order_by("user__email")


def invitation_list(*, project: Project) -> QuerySet[Invitation]:
    return Invitation.objects.filter(project=project).select_related("invited_by")


def token_list(*, user: User, token: ApiToken | None = None) -> QuerySet[ApiToken]:
    """The user's tokens; through a project-restricted token, only those restricted to the same project."""
    tokens = ApiToken.objects.filter(user=user).select_related("project")
    if token is not None and token.project_id is not None:
        tokens = tokens.filter(project_id=token.project_id)
    return tokens

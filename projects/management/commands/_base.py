"""Shared plumbing for the operator commands: domain errors become clear CommandErrors."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from projects.errors import DomainError
from projects.models import Project, User


class OperatorCommand(BaseCommand):
    def execute(self, *args: object, **options: object) -> str | None:
        try:
            return super().execute(*args, **options)
        except DomainError as exc:
            raise CommandError(exc.message) from exc


def user_by_email(email: str) -> User:
    user = User.objects.filter(email__iexact=email).first()
    if user is None:
        raise CommandError(f"No user with e-mail {email}; create it with `manage.py create_user {email}`.")
    return user


def project_by_slug(slug: str) -> Project:
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise CommandError(f"No project {slug!r}; create it with `manage.py create_project {slug}`.")
    return project

"""factory-boy factories for the models tests need."""

from __future__ import annotations

import factory

from projects import services
from projects.addresses import address_vouch
from projects.models import Membership, Project, Role, User


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        skip_postgeneration_save = True

    email = factory.Sequence(lambda n: f"user{n}@example.com")
    password = factory.PostGenerationMethodCall("set_password", "pw-for-tests-1")

    @factory.post_generation
    def _save(obj, create, extracted, **kwargs):
        if create:
            obj.save()

    @factory.post_generation
    def email_verified(obj, create, extracted, **kwargs):
        """Like a real user's, the address is verified unless ``email_verified=False`` (docs/security.md)."""
        if create and extracted is not False:
            address_vouch(user=obj)


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Project

    slug = factory.Sequence(lambda n: f"project-{n}")
    name = factory.LazyAttribute(lambda o: o.slug.replace("-", " ").title())
    repo = factory.LazyAttribute(lambda o: f"github.com/acme/{o.slug}")


def make_member(project: Project, role: str = Role.MEMBER, **user_fields: object) -> User:
    user = UserFactory(**user_fields)
    Membership.objects.create(project=project, user=user, role=role)
    return user


def make_token(user: User, **kwargs: object) -> str:
    _, secret = services.token_create(user=user, name="test", **kwargs)  # type: ignore[arg-type]
    return secret

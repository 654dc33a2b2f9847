"""Whose address is it? Only an e-mail address its owner has verified lets anyone into a project.

With open sign-up, anyone can register ``victim@corp.test`` before the victim does; if that account
then received the victim's invitation, or an admin added "that address", the squatter would be in.
So joining a project needs the address verified (django-allauth's ``EmailAddress``: a link sent to
it was followed) — see docs/security.md. Accounts an operator creates (``manage.py create_user``)
count as verified: the operator vouches for them.
"""

from __future__ import annotations

from allauth.account.models import EmailAddress

from projects.models import User


def address_verified(*, user: User, email: str) -> bool:
    return EmailAddress.objects.filter(user=user, email__iexact=email, verified=True).exists()


def address_vouch(*, user: User) -> EmailAddress:
    """Record the user's address as verified (and primary) on an operator's word."""
    address, _ = EmailAddress.objects.update_or_create(
        user=user, email=user.email, defaults={"verified": True, "primary": True}
    )
    return address

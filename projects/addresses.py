"""Whose address is it? Only an e-mail address its owner has verified lets anyone into a project.

With open sign-up, anyone can register ``victim@corp.test`` before the victim does; if that account
then received the victim's invitation, or an admin added "that address", the squatter would be in.
So joining a project needs the address verified (django-allauth's ``EmailAddress``: a link sent to
it was followed) — see docs/security.md. Accounts an operator creates (``manage.py create_user``)
count as verified: the operator vouches for them. When the company's identity provider vouches for
a squatted address, ``governance.reclaim`` takes the account back from whoever registered it.
"""

from __future__ import annotations

from allauth.account.models import EmailAddress

from projects.models import User


def address_verified(*, user: User, email: str) -> bool:
    return EmailAddress.objects.filter(user=user, email__iexact=email, verified=True).exists()


def address_vouch(*, user: User, email: str | None = None) -> EmailAddress:
    """Record ``email`` (default: the user's own, made primary) as verified on an operator's or an
    identity provider's word."""
    if email is None or email.lower() == user.email.lower():
        address, _ = EmailAddress.objects.update_or_create(
            user=user, email__iexact=user.email, defaults={"email": user.email, "verified": True, "primary": True}
        )
        return address
    address, _ = EmailAddress.objects.update_or_create(
        user=user, email__iexact=email, defaults={"email": email, "verified": True}
    )
    return address

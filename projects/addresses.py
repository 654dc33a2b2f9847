"""Whose address is it? Only an e-mail address its owner has verified lets anyone into a project.

With open sign-up, anyone can register ``victim@corp.test`` before the victim does; if that account
then received the victim's invitation, or an admin added "that address", the squatter would be in.
So joining a project needs the address verified (django-allauth's ``EmailAddress``: a link sent to
it was followed) — see docs/security.md. Accounts an operator creates (``manage.py create_user``)
count as verified: the operator vouches for them. When the company's identity provider vouches for
a squatted address, ``account_reclaim`` takes the account back from whoever registered it.
"""

from __future__ import annotations

from dataclasses import asdict, is_dataclass
from typing import Any

from allauth.account.models import EmailAddress
from allauth.socialaccount.models import SocialAccount
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction

from projects import audit_trail, sso
from projects.models import Membership, User
from projects.scoping import unscoped


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


@transaction.atomic
def account_reclaim(*, user: User, email: str, provider: str) -> dict[str, Any]:
    """The identity provider vouches for ``email``, which ``user`` never verified: whoever signed up
    with it may not be the person now signing in, so everything they could act with ends — tokens,
    device logins, share links, invitations they sent, browser sessions (``sso.account_reclaimed``),
    the password, other single sign-on identities. Memberships stay: an unverified account can
    neither accept an invitation nor be added by ``add_member``, so staff granted each one by hand,
    naming this address, which now proves to be this person's. One audit event names what ended."""
    answers = [answer for _, answer in sso.account_reclaimed.send(sender=User, user=user)]
    if len(answers) != 1 or not is_dataclass(answers[0]) or isinstance(answers[0], type):
        raise ImproperlyConfigured("Nothing ended the reclaimed account's credentials.")  # fail closed
    ended = {key: value for key, value in asdict(answers[0]).items() if key != "memberships"}
    user.set_unusable_password()
    user.save(update_fields=["password"])
    ended["identities"] = SocialAccount.objects.filter(user=user).delete()[0]  # the new one is not saved yet
    with unscoped():
        kept = sorted(Membership.objects.filter(user=user).values_list("project__slug", flat=True))
    address_vouch(user=user, email=email)
    detail = {"provider": provider, "ended": ended, "memberships_kept": kept}
    audit_trail.record(kind=audit_trail.SSO_ACCOUNT_RECLAIMED, target=email, detail=detail)
    return detail

"""A squatted account taken back (docs/security.md "Single sign-on").

With open sign-up and optional verification, anyone can register ``victim@corp`` with a password,
mint tokens and stay signed in. When the company's identity provider later vouches for that address,
allauth connects the login to the existing account (``governance.adapters``): whatever the registrant
opened must end there, while the real person keeps the account and its memberships.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from allauth.socialaccount.models import SocialAccount
from django.db import transaction

from governance.offboarding import user_credentials_end
from projects import audit_trail
from projects.addresses import address_vouch
from projects.models import Membership, User
from projects.scoping import unscoped


@transaction.atomic
def account_reclaim(*, user: User, email: str, provider: str) -> dict[str, Any]:
    """The identity provider vouches for ``email``, which ``user`` never verified: whoever signed up
    with it may not be the person now signing in, so everything they could act with ends — tokens,
    device logins, share links, invitations they sent, browser sessions, the password, other single
    sign-on identities. Memberships stay: an unverified account can neither accept an invitation nor
    be added by ``add_member``, so staff granted each one by hand, naming this address, which now
    proves to be this person's. One audit event names what ended."""
    ended: dict[str, Any] = asdict(user_credentials_end(user=user))
    del ended["memberships"]  # always 0 here: kept, and listed below
    user.set_unusable_password()
    user.save(update_fields=["password"])
    ended["identities"] = SocialAccount.objects.filter(user=user).delete()[0]  # the new one is not saved yet
    with unscoped():
        kept = sorted(Membership.objects.filter(user=user).values_list("project__slug", flat=True))
    address_vouch(user=user, email=email)
    detail = {"provider": provider, "ended": ended, "memberships_kept": kept}
    audit_trail.record(kind=audit_trail.SSO_ACCOUNT_RECLAIMED, target=email, detail=detail)
    return detail

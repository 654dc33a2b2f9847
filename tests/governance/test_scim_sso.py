"""A SCIM rename is the person's new sign-in (docs/identity.md "Renames"): the next single sign-on
with the new address reaches the same account, never a second one. Through the suite's real
OpenID Provider."""

from __future__ import annotations

import pytest
from allauth.account.models import EmailAddress
from allauth.socialaccount.models import SocialAccount

from projects.models import User
from tests.governance.scim_client import SCIM_TOKEN, Scim
from tests.governance.sso_provider import PROVIDER_ID, authorize, configure, oidc_provider, sso_sign_in  # noqa: F401 (fixture)


@pytest.fixture
def provider(db, settings, oidc_provider):  # noqa: F811 (fixture)
    settings.SESSIONLEDGER_SCIM_TOKEN = SCIM_TOKEN
    return configure(settings, oidc_provider, "http://testserver")


def _rename(scim: Scim, user_id: str, email: str) -> None:
    scim.patch(
        f"Users/{user_id}",
        {"op": "replace", "path": "userName", "value": email},
        {"op": "replace", "path": 'emails[type eq "work"].value', "value": email},
    )


def test_a_person_renamed_before_their_first_sign_in_reaches_their_provisioned_account(provider) -> None:
    scim = Scim()
    ann = scim.ok("post", "Users", {"userName": "ann@acme.test"}, status=201)
    _rename(scim, ann["id"], "ann.lee@acme.test")
    assert int(sso_sign_in(provider, "sub-ann", "ann.lee@acme.test").session["_auth_user_id"]) == int(ann["id"])
    assert User.objects.count() == 1


def test_after_a_rename_the_sso_identity_stays_with_the_account(provider) -> None:
    scim = Scim()
    bo = scim.ok("post", "Users", {"userName": "bo@acme.test"}, status=201)
    assert int(sso_sign_in(provider, "sub-bo", "bo@acme.test").session["_auth_user_id"]) == int(bo["id"])
    _rename(scim, bo["id"], "bo.chen@acme.test")
    addresses = list(EmailAddress.objects.filter(user_id=bo["id"]).values_list("email", "verified", "primary"))
    assert addresses == [("bo.chen@acme.test", True, True)]  # the old address is free, the new one verified
    assert int(sso_sign_in(provider, "sub-bo", "bo.chen@acme.test").session["_auth_user_id"]) == int(bo["id"])
    assert SocialAccount.objects.get(uid="sub-bo").user_id == int(bo["id"])
    assert User.objects.count() == 1

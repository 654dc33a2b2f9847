"""SAML 2.0 sign-in (docs/identity.md) against a real IdP: pysaml2's, in a second process
(tests/governance/saml_flow.py). The single sign-on policies of OpenID Connect apply unchanged."""

from __future__ import annotations

import pytest

from projects.models import User
from tests.governance.saml_flow import browser, configure, saml_idp, sign_in, signed_in_as  # noqa: F401 (fixture)


@pytest.fixture
def saml(db, settings, saml_idp):  # noqa: F811 (fixture)
    configure(settings, saml_idp)
    return saml_idp


def test_a_first_saml_sign_in_creates_the_account(saml) -> None:
    client = browser()
    response = sign_in(client, email="ada@acme.test")
    assert signed_in_as(client) == "ada@acme.test", response.content.decode()[-3000:]
    assert User.objects.filter(email="ada@acme.test").count() == 1

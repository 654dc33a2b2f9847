"""SAML 2.0 sign-in (docs/saml.md) against a real IdP: pysaml2's, in a second process
(tests/governance/saml_flow.py). The single sign-on policies of OpenID Connect apply unchanged, and an
assertion is only believed when it is signed, untouched, fresh, for us, and answers this browser's request.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from allauth.account.models import EmailAddress
from allauth.socialaccount.models import SocialAccount
from rest_framework.test import APIClient

from config import env, variables
from config.saml import saml_providers
from projects import audit_trail
from projects.models import AuditEvent, User
from tests.factories import UserFactory
from tests.governance.saml_flow import (
    BASE_DIR,
    PROVIDER_ID,
    browser,
    configure,
    idp_answer,
    post_to_acs,
    saml_idp,  # noqa: F401 (fixture)
    sign_in,
    signed_in_as,
)
from tests.governance.saml_idp import key_and_certificate

ADA = "ada@acme.test"


@pytest.fixture
def saml(db, settings, saml_idp):  # noqa: F811 (fixture)
    configure(settings, saml_idp)
    return saml_idp


def _refused(response, client, caplog=None, reason: str = "") -> None:
    """Nobody signed in, nothing created; ``reason`` is python3-saml's, as allauth logs it."""
    if reason:
        assert reason in caplog.text
    assert signed_in_as(client) is None
    assert not User.objects.filter(email=ADA).exists()
    assert not SocialAccount.objects.exists()
    assert response.status_code in (401, 403)


# --- sign-in and the single sign-on policies ---------------------------------------------------------


def test_a_first_saml_sign_in_creates_the_account_with_a_verified_address(saml) -> None:
    client = browser()
    response = sign_in(client, email=ADA)
    assert signed_in_as(client) == ADA, response.content.decode()[-2000:]
    user = User.objects.get(email=ADA)
    assert SocialAccount.objects.get(user=user).provider == PROVIDER_ID
    assert EmailAddress.objects.get(user=user, email=ADA).verified


def test_a_second_sign_in_reaches_the_same_account(saml) -> None:
    sign_in(browser(), email=ADA)
    client = browser()
    sign_in(client, email=ADA)
    assert signed_in_as(client) == ADA
    assert User.objects.filter(email=ADA).count() == 1 and SocialAccount.objects.count() == 1


def test_the_idp_can_be_given_by_its_metadata_url(db, settings, saml_idp) -> None:  # noqa: F811 (fixture)
    configure(settings, saml_idp, sso_url=None, x509cert=None, metadata_url=f"{saml_idp.url}/metadata")
    client = browser()
    sign_in(client, email=ADA)
    assert signed_in_as(client) == ADA


def test_an_existing_account_signs_in_and_jit_off_creates_none(saml, settings) -> None:
    settings.SESSIONLEDGER_SSO_JIT = False
    UserFactory(email="bob@acme.test")  # with its address verified
    client = browser()
    sign_in(client, email="bob@acme.test")
    assert signed_in_as(client) == "bob@acme.test"

    newcomer = browser()
    sign_in(newcomer, email=ADA)
    assert signed_in_as(newcomer) is None
    assert not User.objects.filter(email=ADA).exists()


def test_an_address_outside_the_allowed_domains_is_refused_and_audited(saml) -> None:
    client = browser()
    response = sign_in(client, email="eve@elsewhere.test")
    assert response.status_code == 403
    assert signed_in_as(client) is None and not User.objects.filter(email="eve@elsewhere.test").exists()
    [event] = AuditEvent.objects.filter(kind=audit_trail.SSO_LOGIN_REFUSED)
    assert (event.target, event.detail) == ("eve@elsewhere.test", {"provider": PROVIDER_ID, "reason": "domain"})


def test_saml_signs_in_when_sso_is_required_and_passwords_are_not(saml, settings) -> None:
    settings.SESSIONLEDGER_SSO_REQUIRED = True
    user = UserFactory(email=ADA)
    password = browser()
    password.post("/accounts/login/", {"login": ADA, "password": "pw-for-tests-1"})
    assert signed_in_as(password) is None
    client = browser()
    sign_in(client, email=ADA)
    assert signed_in_as(client) == ADA == user.email


def test_a_squatted_account_is_reclaimed_by_a_saml_sign_in(saml, settings) -> None:
    """Someone registered the address with a password and minted a token; the IdP vouches for it."""
    settings.ACCOUNT_ALLOW_SIGNUPS = True
    settings.ACCOUNT_EMAIL_VERIFICATION = "optional"
    squatter = browser()
    squatter.post("/accounts/signup/", {"email": ADA, "password1": "Squat-pass-123", "password2": "Squat-pass-123"})
    minted = squatter.post("/api/v1/tokens", {"name": "squatter"}, content_type="application/json")
    secret = minted.json()["secret"]
    account = User.objects.get(email=ADA)

    client = browser()
    sign_in(client, email=ADA)

    assert client.session["_auth_user_id"] == str(account.pk)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert api.get("/api/v1/projects").status_code == 401
    [event] = AuditEvent.objects.filter(kind=audit_trail.SSO_ACCOUNT_RECLAIMED)
    assert (event.target, event.detail["provider"], event.detail["ended"]["tokens"]) == (ADA, PROVIDER_ID, 1)


def test_the_sign_in_page_offers_the_saml_provider(saml) -> None:
    page = browser().get("/accounts/login/").content.decode()
    assert "Acme SAML" in page and f"/accounts/saml/{PROVIDER_ID}/login/" in page


def test_the_service_provider_metadata_asks_for_signed_assertions(saml) -> None:
    """What the operator hands the IdP: our entity id and ACS, and that assertions must be signed."""
    metadata = browser().get(f"/accounts/saml/{PROVIDER_ID}/metadata/").content.decode()
    assert 'WantAssertionsSigned="true"' in metadata
    assert 'AuthnRequestsSigned="false"' in metadata and 'use="encryption"' not in metadata  # docs/saml.md
    assert f"http://sessionledger.test/accounts/saml/{PROVIDER_ID}/acs/" in metadata


# --- assertions that must not be believed ------------------------------------------------------------


@pytest.mark.parametrize("sign", ["none", "response"])
def test_an_unsigned_assertion_is_refused_even_inside_a_signed_response(saml, sign, caplog) -> None:
    client = browser()
    response = sign_in(client, email=ADA, sign=sign)
    _refused(response, client, caplog, "The Assertion of the Response is not signed")


def test_an_assertion_signed_with_sha1_is_refused(saml, caplog) -> None:
    client = browser()
    response = sign_in(client, email=ADA, algorithm="sha1")
    _refused(response, client, caplog, "Deprecated signature algorithm found")


@pytest.mark.parametrize("where", ["name_id", "attribute"])
def test_an_assertion_changed_after_signing_is_refused(saml, where, caplog) -> None:
    """Eve, signed in at the IdP as herself, rewrites whom the signed assertion names before posting it."""
    client = browser()
    posted = idp_answer(client, email="eve@acme.test", name_id=ADA if where == "attribute" else "eve@acme.test")
    xml = posted.xml()
    if where == "name_id":
        assert xml.count(">eve@acme.test<") == 2  # the NameID and the e-mail attribute
        xml = xml.replace(">eve@acme.test</ns1:NameID>", f">{ADA}</ns1:NameID>")
    xml = xml.replace(">eve@acme.test<", f">{ADA}<")
    assert "eve@acme.test" not in xml
    response = post_to_acs(client, posted.with_xml(xml))
    _refused(response, client, caplog, "Signature validation failed")
    assert not User.objects.filter(email="eve@acme.test").exists()
    assert "answer could not be accepted" in response.content.decode()
    [event] = AuditEvent.objects.filter(kind=audit_trail.SSO_LOGIN_REFUSED)
    assert (event.target, event.detail["reason"], event.detail["provider"]) == ("", "provider_error", PROVIDER_ID)


def test_a_replayed_assertion_is_refused_in_the_same_browser_and_in_another(saml) -> None:
    client = browser()
    posted = idp_answer(client, email=ADA)
    post_to_acs(client, posted)
    assert signed_in_as(client) == ADA
    signed_out = client.post("/accounts/logout/")
    assert signed_out["Location"] == "/accounts/login/"  # local: no single logout (docs/saml.md)
    assert signed_in_as(client) is None

    post_to_acs(client, posted)
    assert signed_in_as(client) is None
    other = browser()
    post_to_acs(other, posted)
    assert signed_in_as(other) is None
    assert SocialAccount.objects.count() == 1


def test_an_assertion_answering_another_browsers_request_is_refused(saml) -> None:
    """Captured on its way to someone else, it cannot finish a sign-in this browser started."""
    victim, attacker = browser(), browser()
    posted = idp_answer(victim, email=ADA)
    idp_answer(attacker, email="eve@acme.test")  # the attacker's own pending request
    response = post_to_acs(attacker, posted)
    _refused(response, attacker)


def test_an_assertion_for_another_service_provider_is_refused(saml, caplog) -> None:
    client = browser()
    response = sign_in(client, email=ADA, audience="https://other-app.example/saml/metadata")
    _refused(response, client, caplog, "is not a valid audience for this Response")


def test_an_expired_assertion_is_refused(saml, caplog) -> None:
    client = browser()
    response = sign_in(client, email=ADA, minutes="-10")  # beyond python3-saml's 5 minutes of clock drift
    _refused(response, client, caplog, "Could not validate timestamp: expired")


def test_an_unsolicited_idp_initiated_assertion_is_refused(saml, caplog) -> None:
    client = browser()
    response = sign_in(client, email=ADA, unsolicited="1")
    _refused(response, client, caplog, "IdP initiated SSO rejected")


def test_an_assertion_signed_by_another_key_is_refused(db, settings, saml_idp, tmp_path, caplog) -> None:  # noqa: F811
    """The operator trusts another certificate than the one the IdP signs with (say, a rotated one)."""
    _, _, other = key_and_certificate(tmp_path)
    configure(settings, saml_idp, x509cert=other)
    client = browser()
    response = sign_in(client, email=ADA)
    _refused(response, client, caplog, "Signature validation failed")


# --- configuration -----------------------------------------------------------------------------------

CERT_PLACEHOLDER = "{cert}"


def _entry(cert: str, **overrides) -> dict:
    return {
        "id": "adfs",
        "name": "Corp ADFS",
        "entity_id": "http://adfs.acme.test/adfs/services/trust",
        "sso_url": "https://adfs.acme.test/adfs/ls/",
        "x509cert": cert,
        **overrides,
    }


def test_providers_are_read_from_json_or_from_a_file(monkeypatch, tmp_path, saml_idp) -> None:  # noqa: F811
    pem = "-----BEGIN CERTIFICATE-----\n" + saml_idp.cert + "\n-----END CERTIFICATE-----\n"
    path = tmp_path / "saml.json"
    path.write_text(json.dumps([_entry(pem, attributes={"email": "mail"})]))
    monkeypatch.setenv("SESSIONLEDGER_SAML_PROVIDERS_FILE", str(path))
    [provider] = variables.load()["SESSIONLEDGER_SAML_PROVIDERS"]
    assert provider["x509cert"] == saml_idp.cert  # PEM armour dropped
    assert provider["attributes"] == {"email": ["mail"]}
    assert (provider["id"], provider["sso_url"], provider["metadata_url"]) == (
        "adfs",
        "https://adfs.acme.test/adfs/ls/",
        "",
    )


@pytest.mark.parametrize(
    "entry",
    [
        {"id": "adfs", "name": "x"},  # no entity id
        {"id": "adfs", "name": "x", "entity_id": "urn:x"},  # neither metadata nor certificate
        _entry("not a certificate"),
        _entry(CERT_PLACEHOLDER, sso_url="ftp://adfs.acme.test/"),
        _entry(CERT_PLACEHOLDER, attributes={"groups": "memberOf"}),
        _entry(CERT_PLACEHOLDER, id="a/b"),
    ],
)
def test_malformed_providers_are_refused_naming_the_variable(monkeypatch, saml_idp, entry) -> None:  # noqa: F811
    text = json.dumps([entry]).replace(CERT_PLACEHOLDER, saml_idp.cert)
    monkeypatch.setenv("SESSIONLEDGER_SAML_PROVIDERS", text)
    with pytest.raises(env.ConfigError, match=r"^SESSIONLEDGER_SAML_PROVIDERS=.* is not valid: provider 0\b"):
        variables.load()


def test_two_providers_with_one_id_are_refused(monkeypatch, saml_idp) -> None:  # noqa: F811 (fixture)
    monkeypatch.setenv("SESSIONLEDGER_SAML_PROVIDERS", json.dumps([_entry(saml_idp.cert)] * 2))
    with pytest.raises(env.ConfigError, match="unique id"):
        variables.load()
    oidc = '[{"id": "adfs", "name": "O", "server_url": "https://o.test", "client_id": "c", "secret": "s"}]'
    monkeypatch.setenv("SESSIONLEDGER_SAML_PROVIDERS", json.dumps([_entry(saml_idp.cert)]))
    monkeypatch.setenv("SESSIONLEDGER_OIDC_PROVIDERS", oidc)
    with pytest.raises(env.ConfigError, match="reuses an id of SESSIONLEDGER_OIDC_PROVIDERS: adfs"):
        variables.load()


def test_a_saml_provider_is_enough_for_sso_required(monkeypatch, saml_idp) -> None:  # noqa: F811 (fixture)
    monkeypatch.setenv("SESSIONLEDGER_SSO_REQUIRED", "true")
    monkeypatch.setenv("SESSIONLEDGER_SAML_PROVIDERS", json.dumps([_entry(saml_idp.cert)]))
    assert variables.load()["SESSIONLEDGER_SSO_REQUIRED"] is True


def test_configured_providers_become_allauth_saml_apps_and_may_receive_the_login_form(saml_idp) -> None:  # noqa: F811
    code = (
        "import django, json; django.setup(); from django.conf import settings as s; "
        "print(json.dumps([s.SOCIALACCOUNT_PROVIDERS['saml'], s.CONTENT_SECURITY_POLICY['DIRECTIVES']['form-action']]))"
    )
    entries = [
        _entry(saml_idp.cert),
        _entry("", id="okta", metadata_url="https://acme.okta.com/app/x/sso/saml/metadata"),
    ]
    environ = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SESSIONLEDGER_SAML_PROVIDERS": json.dumps(entries),
    }
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=BASE_DIR, env=environ, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    providers, form_action = json.loads(result.stdout.strip().splitlines()[-1])
    adfs, okta = providers["APPS"]
    assert (adfs["provider_id"], adfs["client_id"]) == ("adfs", "adfs")
    assert adfs["settings"]["idp"]["x509cert"] == saml_idp.cert
    assert okta["settings"]["idp"] == {
        "entity_id": "http://adfs.acme.test/adfs/services/trust",
        "metadata_url": "https://acme.okta.com/app/x/sso/saml/metadata",
    }
    advanced = adfs["settings"]["advanced"]
    assert advanced["want_assertion_signed"] is True and advanced["reject_idp_initiated_sso"] is True
    assert advanced["strict"] is True
    assert form_action == ["'self'", "https://acme.okta.com", "https://adfs.acme.test"]


def test_saml_providers_parse_to_typed_entries(saml_idp) -> None:  # noqa: F811 (fixture)
    assert saml_providers("") == []
    [provider] = saml_providers(json.dumps([_entry(saml_idp.cert, email_from_nameid=True)]))
    assert provider["email_from_nameid"] is True and provider["sp_entity_id"] == ""

"""``SESSIONLEDGER_SAML_PROVIDERS``: the SAML 2.0 identity providers (docs/saml.md).

Parsed here, declared in config/variables.py; config/settings.py turns each into an app of allauth's
``saml`` provider (python3-saml). The parser refuses what would only fail at the first sign-in: a missing
entity id, neither metadata nor a certificate, a certificate that is not one.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, TypedDict
from urllib.parse import urlsplit

from config import env

# What allauth maps to the account; each names one attribute (or a list, the first present wins).
ATTRIBUTE_KEYS = ("uid", "email", "first_name", "last_name")
# Where ADFS, Entra ID, Okta and PingFederate put them by default (docs/saml.md); a provider's
# "attributes" replace these key by key. Without "uid" the NameID identifies the person.
DEFAULT_ATTRIBUTES = {
    "email": [
        "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress",
        "urn:oid:0.9.2342.19200300.100.1.3",
        "email",
    ],
    "first_name": ["http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname", "urn:oid:2.5.4.42", "firstName"],
    "last_name": ["http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname", "urn:oid:2.5.4.4", "lastName"],
}
_PEM_ARMOUR = re.compile(r"-----(BEGIN|END) CERTIFICATE-----|\s+")


class SamlProvider(TypedDict):
    id: str
    name: str
    entity_id: str  # the IdP's
    metadata_url: str  # "" when the IdP is given inline (sso_url + x509cert)
    sso_url: str
    x509cert: str  # base64 DER, no PEM armour
    sp_entity_id: str  # "" means our metadata URL, https://<site>/accounts/saml/<id>/metadata/
    attributes: dict[str, list[str]]
    email_from_nameid: bool


def _url(value: Any, what: str) -> str:
    parts = urlsplit(value.strip()) if isinstance(value, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{what} must be an http:// or https:// URL with a host")
    return str(value).strip()


def certificate(value: Any, what: str) -> str:
    """An X.509 certificate as python3-saml takes it: base64 DER (PEM armour and line breaks dropped)."""
    from cryptography import x509

    text = _PEM_ARMOUR.sub("", value) if isinstance(value, str) else ""
    try:
        x509.load_der_x509_certificate(base64.b64decode(text, validate=True))
    except (binascii.Error, ValueError):
        raise ValueError(f"{what} is not an X.509 certificate (PEM or base64 DER)") from None
    return text


def _attributes(value: Any, what: str) -> dict[str, list[str]]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not set(value) <= set(ATTRIBUTE_KEYS):
        raise ValueError(f"{what} must be an object with keys among {', '.join(ATTRIBUTE_KEYS)}")
    mapping = {}
    for key, names in value.items():
        names = [names] if isinstance(names, str) else names
        if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
            raise ValueError(f"{what}.{key} must be an attribute name or a list of them")
        mapping[key] = names
    return mapping


def _provider(index: int, provider: Any, seen: set[str]) -> SamlProvider:
    what = f"provider {index}"
    if not isinstance(provider, dict) or not all(isinstance(provider.get(k), str) for k in ("id", "name", "entity_id")):
        raise ValueError(f"{what} needs the strings id, name, entity_id")
    ident = provider["id"]
    if not ident or not ident.replace("-", "").isalnum() or ident in seen:
        raise ValueError(f"{what} needs a unique id of letters, digits and dashes")
    if not provider["entity_id"].strip():
        raise ValueError(f"{what} needs the identity provider's entity_id")
    metadata_url, sso_url, cert = "", "", ""
    if provider.get("metadata_url"):
        metadata_url = _url(provider["metadata_url"], f"{what}'s metadata_url")
    elif provider.get("sso_url") or provider.get("x509cert"):
        sso_url = _url(provider.get("sso_url"), f"{what}'s sso_url")
        cert = certificate(provider.get("x509cert"), f"{what}'s x509cert")
    else:
        raise ValueError(f"{what} needs metadata_url, or sso_url and x509cert")
    sp_entity_id = provider.get("sp_entity_id") or ""
    if not isinstance(sp_entity_id, str):
        raise ValueError(f"{what}'s sp_entity_id must be a string")
    email_from_nameid = provider.get("email_from_nameid", False)
    if not isinstance(email_from_nameid, bool):
        raise ValueError(f"{what}'s email_from_nameid must be true or false")
    return SamlProvider(
        id=ident,
        name=provider["name"],
        entity_id=provider["entity_id"].strip(),
        metadata_url=metadata_url,
        sso_url=sso_url,
        x509cert=cert,
        sp_entity_id=sp_entity_id.strip(),
        attributes=_attributes(provider.get("attributes"), f"{what}'s attributes"),
        email_from_nameid=email_from_nameid,
    )


def saml_providers(value: str) -> list[SamlProvider]:
    """``[{"id", "name", "entity_id", "metadata_url" | "sso_url" + "x509cert", ...}, ...]``."""
    providers = env.json_list(value, "providers")
    parsed: list[SamlProvider] = []
    seen: set[str] = set()
    for index, provider in enumerate(providers):
        parsed.append(_provider(index, provider, seen))
        seen.add(parsed[-1]["id"])
    return parsed


def sso_origin(provider: SamlProvider) -> str:
    """Where allauth's sign-in form redirects the browser (the CSP's form-action must allow it). With
    metadata, the metadata's origin: ADFS, Okta, Entra ID and PingFederate serve both from one host."""
    parts = urlsplit(provider["sso_url"] or provider["metadata_url"])
    return f"{parts.scheme}://{parts.netloc}"


def allauth_app(provider: SamlProvider) -> dict[str, Any]:
    """The provider as an app of allauth's ``saml`` provider. Assertions must be signed (a signed
    response around an unsigned assertion is not enough), IdP-initiated sign-in is refused (only an
    answer to a request this browser's session made counts, once), and python3-saml's strict mode
    checks audience, recipient, destination and validity times. The company's IdP speaks for its
    addresses: they count as verified, and SESSIONLEDGER_SSO_DOMAINS limits which it may speak for."""
    idp: dict[str, str] = {"entity_id": provider["entity_id"]}
    if provider["metadata_url"]:
        idp["metadata_url"] = provider["metadata_url"]
    else:
        idp |= {"sso_url": provider["sso_url"], "x509cert": provider["x509cert"]}
    settings: dict[str, Any] = {
        "idp": idp,
        "attribute_mapping": DEFAULT_ATTRIBUTES | provider["attributes"],
        "verified_email": True,
        "use_nameid_for_email": provider["email_from_nameid"],
        "advanced": {
            "strict": True,
            "want_assertion_signed": True,
            "reject_idp_initiated_sso": True,
            "reject_deprecated_algorithm": True,
            "want_attribute_statement": False,
        },
    }
    if provider["sp_entity_id"]:
        settings["sp"] = {"entity_id": provider["sp_entity_id"]}
    return {"provider_id": provider["id"], "name": provider["name"], "client_id": provider["id"], "settings": settings}

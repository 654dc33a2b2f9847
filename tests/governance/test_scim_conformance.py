"""SCIM conformance (docs/identity.md): an independent RFC 7643/7644 tester (scim2-tester) pointed at
the live server with only the base URL and a token passes every check for what the server declares;
and a self-check walks discovery as such a tester does and exercises each declared feature."""

from __future__ import annotations

import httpx2
import pytest
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_tester import Status, check_server

from tests.governance.scim_client import SCIM_TOKEN, Scim


@pytest.fixture
def token(settings) -> str:
    settings.SESSIONLEDGER_SCIM_TOKEN = SCIM_TOKEN
    return SCIM_TOKEN


@pytest.mark.django_db(transaction=True)
def test_an_independent_scim_tester_passes_every_check(live_server, settings, token) -> None:
    settings.SITE_URL = live_server.url  # meta.location must point at the server being tested
    http = httpx2.Client(base_url=f"{live_server.url}/scim/v2", headers={"Authorization": f"Bearer {token}"})
    results = check_server(SyncSCIMClient(http))
    failed = [
        f"{result.title}: {result.reason}"
        for result in results
        if result.status not in (Status.SUCCESS, Status.SKIPPED)
    ]
    assert failed == [], "\n".join(failed)
    assert sum(result.status == Status.SUCCESS for result in results) > 20


def test_discovery_describes_what_is_served_and_each_declared_feature_works(db, token) -> None:
    """Walk discovery as a conformance tester does, then exercise each feature it declares."""
    scim = Scim()
    config = scim.ok("get", "ServiceProviderConfig")
    types = scim.ok("get", "ResourceTypes")
    schemas = scim.ok("get", "Schemas")
    assert types["totalResults"] == len(types["Resources"]) == 2
    by_urn = {schema["id"]: schema for schema in schemas["Resources"]}
    for resource_type in types["Resources"]:
        assert scim.ok("get", f"ResourceTypes/{resource_type['id']}") == resource_type
        schema = scim.ok("get", f"Schemas/{resource_type['schema']}")
        assert schema == by_urn[resource_type["schema"]]  # every resource type's schema is published
    assert scim.call("get", "Schemas/urn:nothing").json()["status"] == "404"

    # each declared attribute of a User is returned by a full create, and attributes= selects it
    user = scim.ok(
        "post",
        "Users",
        {
            "userName": "ann",
            "externalId": "x-1",
            "name": {"formatted": "Ann Lee"},
            "displayName": "Ann Lee",
            "active": True,
            "emails": [{"value": "ann@acme.test"}],
        },
        status=201,
    )
    user_schema = by_urn["urn:ietf:params:scim:schemas:core:2.0:User"]
    for attribute in user_schema["attributes"]:
        assert attribute["name"] in user, attribute["name"]
        selected = scim.ok("get", f"Users/{user['id']}", attributes=attribute["name"])
        assert set(selected) == {"schemas", "id", "meta", attribute["name"]}
    group = scim.ok(
        "post", "Groups", {"displayName": "eng", "externalId": "g-1", "members": [{"value": user["id"]}]}, status=201
    )
    for attribute in by_urn["urn:ietf:params:scim:schemas:core:2.0:Group"]["attributes"]:
        assert attribute["name"] in group, attribute["name"]

    # patch: declared, so every op works
    assert config["patch"]["supported"] is True
    patched = scim.patch(
        f"Users/{user['id']}",
        {"op": "remove", "path": "externalId"},
        {"op": "add", "path": "displayName", "value": "A"},
    )
    assert "externalId" not in patched and patched["displayName"] == "A"

    # filter: declared with maxResults, so each filter form finds the user and count is capped there
    assert config["filter"]["supported"] is True
    for expression in [
        'userName eq "ANN"',
        'emails.value eq "ann@acme.test"',
        'emails[type eq "work"].value eq "ann@acme.test"',
        f'id eq "{user["id"]}"',
        f'userName eq "ann" and id eq "{user["id"]}"',
    ]:
        assert scim.ok("get", "Users", filter=expression)["totalResults"] == 1, expression
    assert scim.ok("get", "Groups", filter='displayName eq "ENG"')["totalResults"] == 1
    for n in range(3):
        scim.ok("post", "Users", {"userName": f"u{n}@acme.test"}, status=201)
    page = scim.ok("get", "Users", count=str(config["filter"]["maxResults"] + 1), startIndex="2")
    assert (page["totalResults"], page["startIndex"], page["itemsPerPage"]) == (4, 2, 3)

    # what is declared unsupported is refused or absent, not half-served
    assert config["bulk"]["supported"] is False and scim.call("post", "Bulk", {}).status_code == 404
    assert config["etag"]["supported"] is False and not scim.call("get", f"Users/{user['id']}").has_header("ETag")
    assert config["changePassword"]["supported"] is False
    assert scim.call("post", ".search", {}).status_code == 501
    assert config["sort"]["supported"] is False

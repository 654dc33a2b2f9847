"""Discovery (RFC 7643 §5–7, RFC 7644 §4): ``/ServiceProviderConfig``, ``/Schemas`` and
``/ResourceTypes``, truthful about what is served: patch and ``eq``/``and`` filters with paging, no
bulk, sort, etag or password change. The schemas list only the attributes kept here."""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response

from governance.scim.groups import GROUP_SCHEMA
from governance.scim.protocol import LIST_SCHEMA, MAX_COUNT, ScimError, ScimView, location
from governance.scim.users import USER_SCHEMA

SCHEMA_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Schema"
RESOURCE_TYPE_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:ResourceType"
CONFIG_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"


def _attr(name: str, kind: str = "string", *, description: str = "", **facets: Any) -> dict[str, Any]:
    attribute: dict[str, Any] = {
        "name": name,
        "type": kind,
        "multiValued": facets.pop("multi", False),
        "description": description or name,
        "required": facets.pop("required", False),
        "mutability": facets.pop("mutability", "readWrite"),
        "returned": facets.pop("returned", "default"),
    }
    if kind in ("string", "reference"):
        attribute["caseExact"] = facets.pop("case_exact", False)
        attribute["uniqueness"] = facets.pop("uniqueness", "none")
    if kind == "reference":
        attribute["referenceTypes"] = facets.pop("references", ["User"])
    if "subs" in facets:
        attribute["subAttributes"] = facets.pop("subs")
    assert not facets, facets
    return attribute


_EXTERNAL_ID = _attr("externalId", description="The identity provider's key", case_exact=True, uniqueness="server")
USER_ATTRIBUTES = [
    _attr("userName", description="Unique; need not be an e-mail address", required=True, uniqueness="server"),
    _EXTERNAL_ID,
    # one name is kept: givenName and familyName are accepted (Okta sends them) and joined into it
    _attr("name", "complex", subs=[_attr("formatted", description="givenName familyName when sent")]),
    _attr("displayName"),
    # active and emails cannot be unassigned here: a person is active or not, and signs in with an
    # address (a userName that is an address stands in for emails when they are not sent)
    _attr("active", "boolean", required=True, description="false ends every access; true when not sent"),
    _attr(
        "emails",
        "complex",
        multi=True,
        required=True,
        description="The sign-in address (one is kept: the primary, else the work one, else the first);"
        " optional when userName is an address",
        subs=[_attr("value", required=True)],
    ),
]
GROUP_ATTRIBUTES = [
    _attr("displayName", required=True, uniqueness="server"),
    _EXTERNAL_ID,
    _attr(
        "members",
        "complex",
        multi=True,
        subs=[
            _attr("value", mutability="immutable", required=True, description="A user's id"),
            _attr("$ref", "reference", mutability="immutable"),
        ],
    ),
]
SCHEMAS: dict[str, dict[str, Any]] = {
    USER_SCHEMA: {"name": "User", "description": "A person", "attributes": USER_ATTRIBUTES},
    GROUP_SCHEMA: {
        "name": "Group",
        "description": "A group; mapped groups grant project roles",
        "attributes": GROUP_ATTRIBUTES,
    },
}
RESOURCE_TYPES: dict[str, dict[str, Any]] = {
    "User": {"name": "User", "endpoint": "/Users", "description": "People", "schema": USER_SCHEMA},
    "Group": {"name": "Group", "endpoint": "/Groups", "description": "Groups", "schema": GROUP_SCHEMA},
}


def schema_resource(urn: str) -> dict[str, Any]:
    return {
        "schemas": [SCHEMA_SCHEMA],
        "id": urn,
        **SCHEMAS[urn],
        "meta": {"resourceType": "Schema", "location": location("Schemas", urn)},
    }


def resource_type_resource(name: str) -> dict[str, Any]:
    return {
        "schemas": [RESOURCE_TYPE_SCHEMA],
        "id": name,
        **RESOURCE_TYPES[name],
        "schemaExtensions": [],
        "meta": {"resourceType": "ResourceType", "location": location("ResourceTypes", name)},
    }


def _listing(resources: list[dict[str, Any]]) -> Response:
    return Response(
        {
            "schemas": [LIST_SCHEMA],
            "totalResults": len(resources),
            "startIndex": 1,
            "itemsPerPage": len(resources),
            "Resources": resources,
        }
    )


class ServiceProviderConfigView(ScimView):
    def get(self, request: Request) -> Response:
        return Response(
            {
                "schemas": [CONFIG_SCHEMA],
                "patch": {"supported": True},
                "bulk": {"supported": False, "maxOperations": 0, "maxPayloadSize": 0},
                "filter": {"supported": True, "maxResults": MAX_COUNT},
                "changePassword": {"supported": False},
                "sort": {"supported": False},
                "etag": {"supported": False},
                "authenticationSchemes": [
                    {
                        "type": "oauthbearertoken",
                        "name": "Bearer token",
                        "description": "SESSIONLEDGER_SCIM_TOKEN or a token from manage.py scim_token",
                        "primary": True,
                    }
                ],
                "meta": {
                    "resourceType": "ServiceProviderConfig",
                    "location": location("ServiceProviderConfig", "")[:-1],
                },
            }
        )


class SearchView(ScimView):
    """POST /.search across resource types (RFC 7644 §3.4.3) is not offered: 501, as the RFC says."""

    def post(self, request: Request) -> Response:
        raise ScimError(501, "Searching several resource types at once is not supported; GET /Users or /Groups.")


class SchemasView(ScimView):
    def get(self, request: Request) -> Response:
        return _listing([schema_resource(urn) for urn in SCHEMAS])


class SchemaView(ScimView):
    def get(self, request: Request, schema_id: str) -> Response:
        if schema_id not in SCHEMAS:
            raise ScimError(404, "No such schema.")
        return Response(schema_resource(schema_id))


class ResourceTypesView(ScimView):
    def get(self, request: Request) -> Response:
        return _listing([resource_type_resource(name) for name in RESOURCE_TYPES])


class ResourceTypeView(ScimView):
    def get(self, request: Request, type_id: str) -> Response:
        if type_id not in RESOURCE_TYPES:
            raise ScimError(404, "No such resource type.")
        return Response(resource_type_resource(type_id))

"""A SCIM caller for the tests: the identity provider's side of /scim/v2 through Django's test client."""

from __future__ import annotations

import json
from typing import Any

from rest_framework.test import APIClient

SCIM_TOKEN = "scim-token-for-tests-0123456789"
PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp"


class Scim:
    def __init__(self, token: str = SCIM_TOKEN) -> None:
        self.client = APIClient(raise_request_exception=False)
        self.client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")

    def call(self, method: str, path: str, body: Any = None, **params: str) -> Any:
        url = "/scim/v2/" + path
        if method == "get":
            return self.client.get(url, params)
        data = json.dumps(body) if body is not None else None
        return getattr(self.client, method)(url, data=data, content_type="application/scim+json")

    def ok(self, method: str, path: str, body: Any = None, status: int = 200, **params: str) -> Any:
        response = self.call(method, path, body, **params)
        assert response.status_code == status, response.content[:500]
        return response.json() if response.content else None

    def patch(self, path: str, *operations: dict[str, Any]) -> Any:
        return self.ok("patch", path, {"schemas": [PATCH_SCHEMA], "Operations": list(operations)})

"""OpenAPI post-processing: every operation documents the errors our API actually returns.

All refusals share one shape (``projects.errors``), so it is declared once here instead of on
each view; the schemathesis test holds the API to this document.
"""

from __future__ import annotations

from typing import Any

ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "additionalProperties": True,
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "field": {"type": "string", "nullable": True},
            },
        }
    },
}
DESCRIPTIONS = {
    "400": "malformed request (error.field names the culprit)",
    "401": "no, invalid, revoked or expired token",
    "403": "your role or your token's scopes do not allow this",
    "404": "no such project for you, or no such object",
    "405": "method not allowed",
    "409": "conflicts with the current state (error.code says how)",
    "428": "authorization pending: keep polling",
    "429": "rate limited; see Retry-After",
}
ALWAYS = ("400", "401", "403", "404", "405", "429")
UNSAFE = ("409",)


def add_error_responses(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            codes = [*ALWAYS, *(UNSAFE if method != "get" else ()), *(("428",) if path.endswith("/token") else ())]
            if path.endswith("/messages"):
                codes.append("409")
            for code in codes:
                operation["responses"].setdefault(
                    code,
                    {
                        "description": DESCRIPTIONS[code],
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
                    },
                )
    return result

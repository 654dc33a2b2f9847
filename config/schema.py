"""OpenAPI post-processing: every operation documents the errors our API actually returns.

All refusals share one shape (``projects.errors``), so it is declared once here instead of on
each view; the schemathesis test holds the API to this document.
"""

from __future__ import annotations

import re
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
                "errors": {  # a validation refusal: every invalid field, the first one also above
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "field": {"type": "string", "nullable": True},
                            "code": {"type": "string"},
                            "message": {"type": "string"},
                        },
                    },
                },
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
    "503": "storage, database or queue unavailable; see Retry-After",
}
ALWAYS = ("400", "401", "403", "404", "405", "429", "503")
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


def lift_blank_defaults(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """A blank-allowed field (``allow_blank=True, default=""``) becomes ``oneOf: [{pattern, default: ""},
    {maxLength: 0}]``: the default sits in the branch whose pattern refuses it, which makes the document
    invalid. It belongs to the field itself (openapi-spec-validator checks it)."""
    _lift(result)
    return result


def _lift(node: Any) -> None:
    if isinstance(node, list):
        for item in node:
            _lift(item)
        return
    if not isinstance(node, dict):
        return
    for branch in node.get("oneOf") or []:
        pattern, default = branch.get("pattern"), branch.get("default")
        if isinstance(pattern, str) and isinstance(default, str) and not re.search(pattern, default):
            node.setdefault("default", branch.pop("default"))
    for value in node.values():
        _lift(value)

"""RFC 7644 §3.5.2 PatchOp as Okta and Entra send it, read into single operations on one attribute.

Both send ``op`` in any case (``Replace``, ``Add``, ``Remove``), with a ``path`` or with an object
value whose keys are paths (``{"active": false}``, ``{"name.givenName": "Ann"}``); Entra also sends
``emails[type eq "work"].value`` and ``"False"``, Okta and Entra ``members[value eq "…"]`` to remove a
member. What each attribute accepts is decided by ``users`` and ``groups``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from governance.scim.protocol import ScimError

OPS = ("add", "replace", "remove")
_VALUE_FILTER = re.compile(
    r'(?P<attr>[A-Za-z]{1,40})\[\s*(?P<key>type|value)\s+eq\s+"(?P<value>[^"\\]{1,254})"\s*\](?P<sub>\.[A-Za-z]{1,40})?'
)


@dataclass(frozen=True)
class Operation:
    op: str  # add, replace or remove
    path: str  # lower case, without a schema URN: "active", "name.givenname", "emails", "members"
    value: Any
    selector: str | None = None  # the "…" of members[value eq "…"] or emails[type eq "…"]


def _path(raw: str) -> tuple[str, str | None]:
    lower = raw.strip()
    if lower.lower().startswith("urn:"):
        # urn:ietf:params:scim:schemas:core:2.0:User:name.givenName; an extension's attributes are kept as such
        head, _, tail = lower.rpartition(":")
        core = head.lower().startswith("urn:ietf:params:scim:schemas:core:")
        lower = tail if core else "urn:" + tail
    if match := _VALUE_FILTER.fullmatch(lower):
        return match["attr"].lower() + (match["sub"] or "").lower(), match["value"]
    return lower.lower(), None


def operations(body: dict[str, Any]) -> list[Operation]:
    raw_ops = body.get("Operations", body.get("operations"))
    if not isinstance(raw_ops, list):
        raise ScimError(400, "A PatchOp needs Operations.", "invalidSyntax")
    out: list[Operation] = []
    for raw in raw_ops:
        op = raw.get("op") if isinstance(raw, dict) else None
        if not isinstance(op, str) or op.lower() not in OPS:
            raise ScimError(400, "Each operation's op is add, replace or remove.", "invalidSyntax")
        op = op.lower()
        path, value = raw.get("path"), raw.get("value")
        if path is None or path == "":
            if op == "remove":
                raise ScimError(400, "A remove operation needs a path.", "noTarget")
            if not isinstance(value, dict):
                raise ScimError(400, "An operation without a path needs an object value.", "invalidValue")
            for key, item in value.items():
                if not isinstance(key, str):
                    raise ScimError(400, "Attribute names are strings.", "invalidPath")
                attr, selector = _path(key)
                out.append(Operation(op, attr, item, selector))
            continue
        if not isinstance(path, str) or len(path) > 300:
            raise ScimError(400, "path must be a string.", "invalidPath")
        attr, selector = _path(path)
        out.append(Operation(op, attr, value, selector))
    return out

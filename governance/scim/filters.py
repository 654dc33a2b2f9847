"""The SCIM filters identity providers send (RFC 7644 §3.4.2.2): ``attribute eq "value"`` joined by
``and``. Okta asks ``userName eq``, Entra ``userName eq`` / ``externalId eq`` and for groups
``displayName eq``; some testers ``emails[type eq "work"].value eq`` or ``id eq``. Anything else is
``invalidFilter``. Both expressions are linear: fixed tokens and classes without nested repetition."""

from __future__ import annotations

import re
from dataclasses import dataclass

from governance.scim.protocol import ScimError
from sessions_app.validation import CONTROL

_TERM = re.compile(
    r'\s*(?P<path>[A-Za-z][A-Za-z0-9.:]{0,120}(?:\[\s*type\s+eq\s+"(?P<type>[A-Za-z]{1,20})"\s*\]\.value)?)'
    r'\s+eq\s+"(?P<value>[^"\\]{1,254})"\s*',
    re.IGNORECASE,
)
_AND = re.compile(r"and\b", re.IGNORECASE)


@dataclass(frozen=True)
class Term:
    path: str  # lower case, a schema URN prefix and a [type eq …] dropped: "username", "emails.value"
    value: str
    email_type: str | None = None  # emails[type eq "work"]: only that type


def parse_filter(raw: str, allowed: frozenset[str]) -> list[Term]:
    terms: list[Term] = []
    position = 0
    while True:
        match = _TERM.match(raw, position)
        if match is None or CONTROL.search(match["value"]):
            break
        path = match["path"].lower()
        if match["type"]:
            path = path.partition("[")[0] + ".value"
        if path.startswith("urn:"):
            path = path.rpartition(":")[2]
        if path not in allowed:
            break
        email_type = match["type"].lower() if match["type"] else None
        terms.append(Term(path=path, value=match["value"], email_type=email_type))
        position = match.end()
        if position == len(raw):
            return terms
        joined = _AND.match(raw, position)
        if joined is None:
            break
        position = joined.end()
    supported = ", ".join(sorted(allowed))
    raise ScimError(
        400, f'Only filters of the form attribute eq "value" [and …] on {supported} are supported.', "invalidFilter"
    )

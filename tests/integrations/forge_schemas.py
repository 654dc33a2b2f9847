"""Every request the app sent the fake forge, checked against the forge's published description: GitHub's
OpenAPI operations (tests/fixtures/github_openapi/) and GitLab's documented request shapes
(tests/fixtures/gitlab_api/). A request that matches no operation, names an undeclared query parameter,
gives a parameter of the wrong type or sends a body the schema refuses fails the test."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from tests.integrations.fakeforge import Sent

FIXTURES = Path(__file__).parent.parent / "fixtures"
GITHUB_COMMENT_MAX = 65536  # characters GitHub accepts in a comment's body (its error says so)


@cache
def operations(forge: str) -> list[tuple[str, str, re.Pattern[str], dict[str, Any]]]:
    path = FIXTURES / ("github_openapi/operations.json" if forge == "github" else "gitlab_api/requests.json")
    found = []
    for key, operation in json.loads(path.read_text())["operations"].items():
        method, template = key.split(" ", 1)
        pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(template))
        found.append((key, method, re.compile(pattern), operation))
    return found


def _as_repos(path: str) -> str:
    """``/repositories/{id}/…`` as the description names it (GitHub serves both; see the fixture's README)."""
    return re.sub(r"^/repositories/\d+/", "/repos/acme/api/", path)


def _value(raw: str, schema: dict[str, Any]) -> Any:
    if schema.get("type") == "integer":
        if not re.fullmatch(r"\d+", raw):
            raise AssertionError(f"{raw!r} is not an integer")
        return int(raw)
    return raw


def check(forge: str, sent: Sent) -> str:
    """The operation ``sent`` is, or an AssertionError saying why it is none."""
    path = _as_repos(sent.path) if forge == "github" else sent.path
    for key, method, pattern, operation in operations(forge):
        match = pattern.fullmatch(path)
        if method != sent.method or match is None:
            continue
        declared = {p["name"]: p for p in operation["parameters"]}
        for name, raw in match.groupdict().items():
            jsonschema.validate(_value(raw, declared[name]["schema"]), declared[name]["schema"])
        for name, values in sent.query.items():
            parameter = declared.get(name)
            assert parameter and parameter["in"] == "query", f"{sent.method} {sent.path}: undeclared ?{name}"
            for raw in values:
                jsonschema.validate(_value(raw, parameter["schema"]), parameter["schema"])
        schema = operation["requestBody"]
        if schema is None:
            assert sent.body is None, f"{sent.method} {sent.path}: a body where none is described"
        elif sent.body is None:
            assert not operation.get("requestBodyRequired", True), f"{sent.method} {sent.path}: no body"
        else:
            jsonschema.validate(sent.body, schema)
            if forge == "github" and "body" in (sent.body or {}):
                assert len(sent.body["body"]) <= GITHUB_COMMENT_MAX
        return key
    raise AssertionError(f"{sent.method} {sent.path} is no operation of {forge}'s description")


def check_all(forge: str, sent: list[Sent]) -> set[str]:
    """Check every request (the App's token requests included); the operations they were."""
    return {check(forge, request) for request in sent if request.path != "/scripted"}

"""The API documentation served by the app: complete (every filter, with examples), and self-contained."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from sessions_app.filters import SessionFilter
from sessions_app.serializers import IngestMetadataSerializer

SESSIONS = "/api/v1/projects/{project}/sessions"


@pytest.fixture(scope="module")
def schema(django_db_blocker) -> dict:
    with django_db_blocker.unblock():
        response = Client().get("/api/v1/schema?format=json")
    assert response.status_code == 200
    return json.loads(response.content)


def _query_parameters(schema: dict) -> list[tuple[str, str, dict]]:
    return [
        (f"{method.upper()} {path}", parameter["name"], parameter)
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        for parameter in operation.get("parameters", [])
        if parameter["in"] != "path"
    ]


def test_the_session_list_documents_every_filter(schema) -> None:
    documented = {p["name"]: p for p in schema["paths"][SESSIONS]["get"]["parameters"]}
    assert set(SessionFilter.base_filters) <= set(documented)
    assert documented["kind"]["schema"]["enum"] == ["checkpoint", "task", "clear", "end", "manual"]
    assert documented["since"]["schema"]["format"] == "date-time"
    assert all(documented[name]["description"] for name in SessionFilter.base_filters)


def test_every_query_parameter_and_header_has_an_example(schema) -> None:
    missing = [f"{operation} {name}" for operation, name, p in _query_parameters(schema) if "example" not in p]
    assert missing == []


def test_the_ingest_examples_are_valid_uploads(schema) -> None:
    ingest = schema["paths"][SESSIONS]["post"]
    examples = ingest["requestBody"]["content"]["multipart/form-data"]["examples"]
    assert set(examples) == {"checkpoint", "task"}
    for name, example in examples.items():
        metadata = IngestMetadataSerializer(data=json.loads(example["value"]["metadata"]))
        assert metadata.is_valid(), (name, metadata.errors)
    assert "curl" in ingest["description"] and "Idempotency-Key" in ingest["description"]
    assert ingest["responses"]["202"]["content"]["application/json"]["example"]["status"] == "processing"


@pytest.mark.django_db
def test_the_docs_page_loads_everything_from_this_site_and_runs_no_inline_script() -> None:
    response = Client().get("/api/v1/docs")
    assert response.status_code == 200
    html = response.content.decode()
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert sources and all(source.startswith("/") for source in sources), sources
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), "an inline <script> would break the CSP"
    assert "<style" not in html
    assert "script-src 'self'" in response["Content-Security-Policy"]


@pytest.mark.django_db
def test_the_docs_init_script_is_served_from_a_url() -> None:
    response = Client().get("/api/v1/docs?script=")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle" in response.content.decode()


def test_the_docs_offer_bearer_token_authentication(schema) -> None:
    assert schema["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http",
        "scheme": "bearer",
        "description": schema["components"]["securitySchemes"]["bearerAuth"]["description"],
    }
    assert {"bearerAuth": []} in schema["paths"][SESSIONS]["get"]["security"]

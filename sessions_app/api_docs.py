"""What /api/v1/docs shows beyond the views' own annotations: the session list's filters and examples.

The list view is a plain ``APIView``, so drf-spectacular cannot see its ``SessionFilter``; the filters
are declared here from the FilterSet itself, so a new filter appears in the document (and fails the
"every parameter has an example" test until it gets one). Examples live in one table, keyed by
parameter name and, where two endpoints use a name differently, by the path's last segment.
"""

from __future__ import annotations

import json
from typing import Any

import django_filters

from sessions_app.filters import SessionFilter

SESSIONS_PATH = "/api/v1/projects/{project}/sessions"
COMMIT = "3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39"
AGENT_SESSION = "5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17"

# name → example; "segment:name" wins for that path segment (e.g. messages' kind ≠ the list's kind).
EXAMPLES: dict[str, Any] = {
    "branch": "feature/search",
    "author": "alice@example.com",
    "commit": COMMIT[:7],
    "task": "PROJ-142",
    "kind": "checkpoint",
    "status": "complete",
    "since": "2026-02-01T00:00:00Z",
    "until": "2026-02-28T23:59:59Z",
    "q": "tokenizer unicode",
    "pr": "42",
    "head": "feature/search",
    "pulls:state": "open",
    # an opaque keyset cursor as the list's `next` link gives it: sessions older than 2026-02-10 09:00
    "cursor": "cD0yMDI2LTAyLTEwVDA5JTNBMDAlM0EwMFo=",
    "limit": 50,
    "offset": 0,
    "messages:kind": ["prompt", "text"],
    "messages:q": "unicode",
    "role": ["user", "assistant"],
    "files": ["src/tokenize.py", "tests/test_tokenize.py"],
    "budget": 4000,
    "export": "tool_usage",
    "session": "0b8e1c52-4a53-4a6e-9d55-0c6f8f3f3e21",
    "until_turn": 3,
    "transcript:until": COMMIT[:10],
    "part": "tool-results/toolu_01XyZ.txt",
    "prompts": False,
    "allow_gaps": False,
    "repo": "github.com/acme/api",
    "Idempotency-Key": f"checkpoint-{COMMIT}",
    "audit:actor": "alice@example.com",
    "audit:kind": "membership.role_changed",
    "audit:format": "csv",
    "audit:project": "acme-api",
    "export:format": "zip",
}
# What the type of a django-filter filter is in the document; anything else is a string.
FILTER_SCHEMAS: dict[type, dict[str, Any]] = {
    django_filters.IsoDateTimeFilter: {"type": "string", "format": "date-time"},
}
FILTER_PATTERNS = {"commit": "^[0-9a-fA-F]{7,40}$"}
FILTER_DESCRIPTIONS = {  # for the filters without a help_text of their own
    "branch": "the feature branch the session was captured on (exact)",
    "task": "the task id (exact), e.g. a Beads or Jira id",
    "kind": "what ended the captured segment",
    "status": "processing state; task sessions end complete, rejected or abandoned",
    "since": "captured (uploaded) at or after this time, ISO 8601",
    "until": "captured (uploaded) at or before this time, ISO 8601",
}

INGEST_METADATA = {
    "kind": "checkpoint",
    "commit_hash": COMMIT,
    "feature_branch": "feature/search",
    "commit_message": "Tokenizer handles unicode input",
    "agent": "claude-code",
    "agent_version": "2.1.39",
    "agent_session_id": AGENT_SESSION,
    "start_offset": 0,
    "end_offset": 48213,
    "files_touched": ["src/tokenize.py"],
    "diff_stat": {"files": 1, "insertions": 12, "deletions": 3},
    "captured_at": "2026-02-10T09:14:03Z",
    "redaction": {"aws_access_key": 1},
}
TASK_METADATA = {
    "kind": "task",
    "task_id": "PROJ-142",
    "status": "complete",
    "feature_branch": "feature/search",
    "agent_session_id": AGENT_SESSION,
    "start_offset": 48213,
    "end_offset": 60120,
}
INGEST_DESCRIPTION = """\
Uploads one captured transcript segment as `multipart/form-data`: a `metadata` part (JSON), a
`transcript` part (gzip of the JSONL), and one `subagent` part per sub-agent transcript (its file
name is the agent id). Answers **202** once the blobs are stored durably; processing follows on a
worker (the session's `status` is `processing` until then). Repeating an upload with the same
`Idempotency-Key` — or the same checkpoint bytes for a commit — answers **200** with the session it
already made.

```sh
curl -H "Authorization: Bearer $SESSIONLEDGER_TOKEN" \\
     -H "Idempotency-Key: checkpoint-3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39" \\
     -F 'metadata={"kind": "checkpoint", "commit_hash": "3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39", \
"agent_session_id": "5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17", "start_offset": 0, "end_offset": 48213}' \\
     -F 'transcript=@session.jsonl.gz;type=application/gzip' \\
     https://ledger.example.com/api/v1/projects/acme-api/sessions
```

The `sessionledger` client does this for you after each commit.
"""


def document_filters_and_examples(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """drf-spectacular post-processing hook (SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"])."""
    paths = result.get("paths", {})
    if SESSIONS_PATH in paths:
        _add_list_filters(paths[SESSIONS_PATH]["get"])
        _add_ingest_examples(paths[SESSIONS_PATH]["post"])
    for path, operations in paths.items():
        segment = path.rstrip("/").rsplit("/", 1)[-1]
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                _add_parameter_example(parameter, segment)
    return result


def _add_parameter_example(parameter: dict[str, Any], segment: str) -> None:
    if parameter["in"] == "path" or "example" in parameter or "examples" in parameter:
        return
    for key in (f"{segment}:{parameter['name']}", parameter["name"]):
        if key in EXAMPLES:
            parameter["example"] = EXAMPLES[key]
            return


def _add_list_filters(operation: dict[str, Any]) -> None:
    present = {p["name"] for p in operation.get("parameters", [])}
    added = [
        _filter_parameter(name, field) for name, field in SessionFilter.base_filters.items() if name not in present
    ]
    operation["parameters"] = sorted(
        [*operation.get("parameters", []), *added], key=lambda p: (p["in"] != "path", p["name"])
    )


def _filter_parameter(name: str, field: django_filters.Filter) -> dict[str, Any]:
    schema = dict(FILTER_SCHEMAS.get(type(field), {"type": "string"}))
    if isinstance(field, django_filters.ChoiceFilter):
        schema["enum"] = [value for value, _ in field.extra["choices"]]
    if name in FILTER_PATTERNS:
        schema["pattern"] = FILTER_PATTERNS[name]
    description = str(field.extra.get("help_text") or FILTER_DESCRIPTIONS.get(name, name))
    return {"in": "query", "name": name, "required": False, "schema": schema, "description": description}


def _add_ingest_examples(operation: dict[str, Any]) -> None:
    operation["description"] = INGEST_DESCRIPTION
    multipart = operation["requestBody"]["content"]["multipart/form-data"]
    multipart["examples"] = {
        "checkpoint": {
            "summary": "A commit's checkpoint: the transcript up to the commit",
            "value": {"metadata": json.dumps(INGEST_METADATA), "transcript": "(gzip of the JSONL bytes)"},
        },
        "task": {
            "summary": "A task's session, closed as done",
            "value": {"metadata": json.dumps(TASK_METADATA), "transcript": "(gzip of the JSONL bytes)"},
        },
    }
    accepted = operation["responses"].get("202", {}).get("content", {}).get("application/json")
    if accepted is not None:
        accepted["example"] = {
            "id": "0b8e1c52-4a53-4a6e-9d55-0c6f8f3f3e21",
            "status": "processing",
            "url": "https://ledger.example.com/api/v1/projects/acme-api/sessions/0b8e1c52-4a53-4a6e-9d55-0c6f8f3f3e21",
            "web_url": "https://ledger.example.com/p/acme-api/s/0b8e1c52-4a53-4a6e-9d55-0c6f8f3f3e21",
        }

"""Build ingest requests the way the client sends them (multipart: metadata + gzip parts)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
from typing import Any

from rest_framework.test import APIClient


def commit_hash(seed: str) -> str:
    return hashlib.sha1(seed.encode()).hexdigest()


def metadata_for(raw: bytes, **overrides: Any) -> dict[str, Any]:
    data = {
        "kind": "checkpoint",
        "feature_branch": "010-session-capture",
        "commit_hash": commit_hash("c1"),
        "agent": "claude-code",
        "agent_version": "2.1.39",
        "agent_session_id": "5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17",
        "start_offset": 0,
        "end_offset": len(raw),
        "commit_message": "Add session capture\n\nDetails.",
        "diff_stat": {"files": 2, "insertions": 30, "deletions": 4},
        "files_touched": ["src/capture.py"],
        "redaction": {"github_token": 1},
    }
    data.update(overrides)
    return data


def gz_file(data: bytes, name: str) -> io.BytesIO:
    part = io.BytesIO(gzip.compress(data))
    part.name = name
    return part


def upload(
    client: APIClient,
    slug: str,
    raw: bytes,
    metadata: dict[str, Any] | None = None,
    *,
    subagents: dict[str, bytes] | None = None,
    transcript_part: io.BytesIO | None = None,
    metadata_text: str | None = None,
    **headers: str,
) -> Any:
    body: dict[str, Any] = {
        "metadata": metadata_text if metadata_text is not None else json.dumps(metadata or metadata_for(raw)),
        "transcript": transcript_part or gz_file(raw, "transcript.jsonl.gz"),
    }
    if subagents:
        body["subagent"] = [gz_file(data, f"agent-{agent_id}.jsonl.gz") for agent_id, data in subagents.items()]
    extra = {f"HTTP_{k.upper().replace('-', '_')}": v for k, v in headers.items()}
    return client.post(f"/api/v1/projects/{slug}/sessions", body, format="multipart", **extra)

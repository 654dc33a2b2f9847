"""Synthetic transcripts for the demo project (what a newcomer sees on first start)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

DEMO_COMMITS = [
    (
        "3f1c2a9e8b7d6c5f4e3d2c1b0a9f8e7d6c5b4a39",
        "Add transcript capture on commit",
        "Capture the conversation whenever HEAD moves; never block the hook.",
    ),
    (
        "7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b",
        "Redact secrets before upload",
        "Redact API keys and tokens before anything leaves the machine. Keep JSON valid.",
    ),
    (
        "c0ffee1234567890abcdef1234567890abcdef12",
        "Show sessions per branch",
        "Add a branch timeline so reviewers see each checkpoint with its turns.",
    ),
]


def _line(kind: str, uuid: str, parent: str | None, when: datetime, message: dict) -> str:
    return json.dumps(
        {
            "type": kind,
            "uuid": uuid,
            "parentUuid": parent,
            "sessionId": "demo-conversation",
            "timestamp": when.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "cwd": "/home/dev/demo-api",
            "gitBranch": "010-session-capture",
            "version": "2.1.39",
            "isSidechain": False,
            "userType": "external",
            "message": message,
        },
        separators=(",", ":"),
    )


def demo_transcript(index: int, prompt: str, commit_message: str) -> bytes:
    start = datetime(2026, 2, 10, 9, 0, tzinfo=UTC) + timedelta(hours=index)
    tool_id, ids = f"toolu_demo{index}", [f"demo-{index}-{n}" for n in range(5)]
    lines = [
        _line("user", ids[0], None, start, {"role": "user", "content": prompt}),
        _line(
            "assistant",
            ids[1],
            ids[0],
            start + timedelta(seconds=4),
            {
                "id": f"msg_demo{index}",
                "role": "assistant",
                "model": "claude-demo",
                "content": [{"type": "text", "text": "I'll look at the code first, then make the change."}],
            },
        ),
        _line(
            "assistant",
            ids[2],
            ids[1],
            start + timedelta(seconds=6),
            {
                "id": f"msg_demo{index}",
                "role": "assistant",
                "model": "claude-demo",
                "content": [{"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": "pytest -q"}}],
            },
        ),
        _line(
            "user",
            ids[3],
            ids[2],
            start + timedelta(seconds=20),
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": "42 passed"}]},
        ),
        _line(
            "assistant",
            ids[4],
            ids[3],
            start + timedelta(seconds=30),
            {
                "id": f"msg_demo{index}b",
                "role": "assistant",
                "model": "claude-demo",
                "content": [{"type": "text", "text": f"Done. Committed as **{commit_message}**; all tests pass."}],
            },
        ),
    ]
    return ("\n".join(lines) + "\n").encode()

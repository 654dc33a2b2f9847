"""Sessions for page tests: uploaded through the real API, processed synchronously (no worker)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from django_scopes import scopes_disabled

from frontend.session_page import reading
from projects.models import Project, User
from projects.scoping import project_scope
from sessions_app.models import Session
from sessions_app.processing import session_process
from tests.client.transcript_builder import TranscriptBuilder
from tests.uploads import commit_hash, metadata_for, upload

XSS_PAYLOADS = [
    "<script>alert('prompt')</script>",
    "<img src=x onerror=\"alert('img')\">",
    "[click me](javascript:alert('link'))",
    "[entity](&#106;avascript:alert('entity'))",
    "[spaced](java\tscript:alert('tab'))",
    "![pixel](javascript:alert('image'))",
    "<a href=\"javascript:alert('raw')\">raw link</a>",
    "&lt;script&gt;alert('entities')&lt;/script&gt;",
    "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "<svg onload=alert('svg')></svg>",
    "<iframe src=\"javascript:alert('frame')\"></iframe>",
]


def rich_transcript(start: str = "2026-02-10T21:00:00Z") -> tuple[bytes, dict[str, bytes]]:
    """Two turns with Markdown, code, thinking, tools (one failing), a sub-agent and a compaction."""
    b = TranscriptBuilder(start=start)
    b.prompt("Add a **--verbose** flag to the CLI\n\n```python\nparser.add_argument('--verbose')\n```")
    b.thinking("The flag belongs in cli.py; check argparse usage first.")
    b.assistant_text("I'll look at the CLI first.")
    b.parallel_tools(
        [("Read", {"file_path": "/work/app/cli.py"}, "def main(): ..."), ("Grep", {"pattern": "argparse"}, "cli.py:1")]
    )
    b.new_response().tool_call(
        "Edit",
        {
            "file_path": "/work/app/cli.py",
            "old_string": "quiet = False",
            "new_string": "quiet = False\nverbose = False",
        },
        result="The file was updated.",
    )
    b.new_response().tool_call(
        "Bash", {"command": "pytest -q", "description": "Run the tests"}, result="1 failed, 11 passed", is_error=True
    )
    b.new_response().task(
        "Check docs", "Find where flags are documented", agent_id="a2898e3", result="README.md documents flags."
    )
    b.new_response().assistant_text("Added `--verbose`; one test still fails.").turn_end()
    b.compact("The user asked for a --verbose flag.", trigger="manual")
    b.prompt("Now update the README")
    b.tool_call(
        "Write", {"file_path": "/work/app/README.md", "content": "# App\n\nUse `--verbose`."}, result="File created."
    )
    b.assistant_text("README updated.").turn_end()
    sub = b.subagent("a2898e3")
    sub.user("Find where flags are documented").tool_call("Grep", {"pattern": "--"}, result="README.md:3")
    sub.assistant_text("README.md documents flags.")
    return b.build(), {"a2898e3": sub.build()}


def xss_transcript() -> bytes:
    b = TranscriptBuilder()
    for payload in XSS_PAYLOADS:
        b.prompt(payload).assistant_text(f"You wrote: {payload}")
        b.tool_call("Bash", {"command": payload}, result=payload).turn_end()
    return b.build()


def long_transcript(turns: int, *, tools_per_turn: int = 3, start: str = "2026-02-10T09:00:00Z") -> bytes:
    """``turns`` turns of (prompt, thinking, text, tools…, text): 4 + 2·tools_per_turn messages each."""
    b = TranscriptBuilder(start=start, step_seconds=2)
    for turn in range(1, turns + 1):
        b.prompt(f"Turn {turn}: please change module_{turn}.py")
        b.thinking(f"Plan for turn {turn}.").assistant_text(f"Working on **module_{turn}**.")
        for call in range(tools_per_turn):
            b.new_response().tool_call(
                "Bash", {"command": f"pytest tests/test_{turn}_{call}.py"}, result=f"{call} passed"
            )
        b.new_response().assistant_text(f"Turn {turn} done.").turn_end()
    return b.build()


@pytest.fixture
def renders(monkeypatch) -> list[int]:
    """How many times a page of a conversation was turned into HTML (the real renderer still runs)."""
    calls: list[int] = []
    real = reading.render_page

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(reading, "render_page", counted)
    return calls


@pytest.fixture
def make_session(api_as) -> Callable[..., Session]:
    """``make_session(project, user, raw=…, subagents=…, seed=…, **metadata)`` → a processed Session."""

    def make(
        project: Project,
        user: User,
        raw: bytes | None = None,
        *,
        subagents: dict[str, bytes] | None = None,
        seed: str | None = None,
        process: bool = True,
        **metadata: Any,
    ) -> Session:
        if raw is None:
            raw, subagents = rich_transcript()
        metadata.setdefault("commit_hash", commit_hash(seed or str(datetime.now(UTC).timestamp())))
        response = upload(api_as(user), project.slug, raw, metadata_for(raw, **metadata), subagents=subagents)
        assert response.status_code == 202, response.content
        with scopes_disabled():
            session = Session.objects.select_related("project", "author").get(pk=response.json()["id"])
        if process:
            with project_scope(project):
                session_process(session=session)
        with scopes_disabled():
            return Session.objects.select_related("project", "author").get(pk=session.pk)

    return make


@pytest.fixture
def rich_session(world, make_session) -> Session:
    raw, subagents = rich_transcript()
    return make_session(world.project, world.member, raw, subagents=subagents, seed="rich")

"""A pull request to review: two segments of one agent session on its commits, another agent
session's commit a force push dropped, and a session on no PR — each with an attribution record."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from sessionledger.core import attribution, attribution_record
from sessions_app.models import Session
from tests.client.transcript_builder import TranscriptBuilder
from tests.integrations.records import pull_request
from tests.uploads import commit_hash

KEPT, SECOND, DROPPED, ELSEWHERE = (commit_hash(s) for s in ("pr-kept", "pr-second", "pr-dropped", "not-in-pr"))


def attribute(
    api_as: Callable[..., Any], session: Session, owner: Any, files: dict[str, tuple[int, int]], model: str
) -> None:
    """Store a record of ``session``'s commit: per path (lines the agent wrote, then lines a human wrote)."""
    added: dict[str, list[attribution.Line]] = {}
    steps: list[attribution.Step] = []
    for path, (ai, human) in files.items():
        lines = [attribution.Line.of(n, f"{path} {session.pk} line {n}") for n in range(1, ai + human + 1)]
        added[path] = lines
        texts = [line.text for line in lines[:ai]]
        steps.append(attribution.Step(str(uuid.uuid4()), "Write", f"/repo/{path}", texts, len(steps), 0, model))
    record = attribution_record.build_record(
        revision=session.commit_hash,
        added=added,
        owners=attribution.attribute(added, steps),
        line_counts={path: len(lines) for path, lines in added.items()},
        agent="claude-code",
        base_url="http://testserver",
        project=session.project.slug,
    )
    url = f"/api/v1/projects/{session.project.slug}/sessions/{session.pk}/attribution"
    assert api_as(owner).post(url, record, format="json").status_code == 201


def review_story(world: Any, make_session: Callable[..., Session], api_as: Callable[..., Any]) -> dict[str, Session]:
    """PR #7: KEPT and SECOND are two segments of one agent session; DROPPED (a force push removed it)
    is another agent session's; ELSEWHERE is on no PR."""
    whole = TranscriptBuilder().prompt("Make the upload <b>retry</b>").assistant_text("Retrying now.").turn_end()
    first = whole.build()
    second = whole.prompt("Also back off on 429").assistant_text("Backing off.").turn_end().build()[len(first) :]
    chain = str(uuid.uuid4())
    made = {
        "kept": make_session(world.project, world.member, first, commit_hash=KEPT, agent_session_id=chain,
                             files_touched=["app.py"], commit_message="Retry the upload"),
        "second": make_session(world.project, world.member, second, commit_hash=SECOND, agent_session_id=chain,
                               start_offset=len(first), end_offset=len(first) + len(second),
                               files_touched=["app.py", "backoff.py"], commit_message="Back off on 429"),
        "dropped": make_session(world.project, world.member, TranscriptBuilder().prompt("An abandoned try").build(),
                                commit_hash=DROPPED, agent_session_id=str(uuid.uuid4()), files_touched=["old.py"],
                                commit_message="First attempt"),
        "elsewhere": make_session(world.project, world.member, TranscriptBuilder().prompt("Unrelated work").build(),
                                  commit_hash=ELSEWHERE, agent_session_id=str(uuid.uuid4()),
                                  files_touched=["other.py"], commit_message="Unrelated work"),
    }  # fmt: skip
    attribute(api_as, made["kept"], world.member, {"app.py": (3, 1)}, "claude-opus-4-6")
    attribute(api_as, made["second"], world.member, {"app.py": (2, 2), "backoff.py": (4, 0)}, "claude-sonnet-4-5")
    attribute(api_as, made["dropped"], world.member, {"old.py": (5, 0)}, "claude-opus-4-6")
    attribute(api_as, made["elsewhere"], world.member, {"other.py": (7, 0)}, "claude-opus-4-6")
    pull_request(world.project, number=7, commits=[KEPT, SECOND], dropped=(DROPPED,))
    return made

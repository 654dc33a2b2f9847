"""CPU time and response bytes of every view of a huge session of many tiny turns.

    .venv/bin/python bench/bench_huge_session.py [--megabytes 7] [--segments 2] [--repeat 3]

The shape a member can upload to make the web tier work: thousands of one-line prompts each answered
by one line, ``--megabytes`` of raw JSONL, uploaded as one session (the session and shared pages) and
again cut into ``--segments`` checkpoint segments of another agent session (the whole-conversation
page stitches them). Stored and processed through the real ingest
and worker code; requests through Django's test client, in-process (middleware, auth, tenant scope,
blob read, filtering, grouping, templates).

For each view, ``first`` is the CPU time (``time.process_time``) of the first request for it, after
page 1 of the same session or conversation (so what that view keeps is as warm as a reader finds it);
``again`` the median of ``--repeat`` repeats (what a reader pays who asks for a page already asked
for, and what an attacker pays who repeats one); ``html_bytes`` the uncompressed response body.
``hostile`` asks for ``--repeat`` pages nobody asked for yet (page numbers walking the session).

Prints one JSON object; the project and its blobs are deleted after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

os.environ.setdefault("DEBUG", "false")  # production settings, as every bench of the service

from djangobench import setup, stored_session


def tiny_turns(megabytes: float) -> bytes:
    """One-line prompts each answered by one line, until the transcript holds ``megabytes``."""
    from tests.client.transcript_builder import TranscriptBuilder

    b = TranscriptBuilder(start="2026-02-10T09:00:00Z", step_seconds=1)
    turn, size = 0, 0
    while size < megabytes * 1_000_000:
        for _ in range(100):
            turn += 1
            b.prompt(f"tiny prompt {turn}").assistant_text(f"ok {turn}").turn_end()
        size = len(b.build())
    return b.build()


def segments(project, user, raw: bytes, count: int) -> list[Any]:
    """``count`` checkpoint segments of one agent session, cut at line boundaries."""
    from projects.scoping import project_scope
    from sessions_app.models import Session
    from sessions_app.processing import session_process

    lines = raw.splitlines(keepends=True)
    size = -(-len(lines) // count)
    agent_session_id, offset, made = str(uuid.uuid4()), 0, []
    for start in range(0, len(lines), size):
        chunk = b"".join(lines[start : start + size])
        session = stored_session(
            project, user, chunk, agent_session_id=agent_session_id, start_offset=offset, end_offset=offset + len(chunk)
        )
        with project_scope(project):
            session_process(session=session)
            made.append(Session.objects.select_related("project", "author").get(pk=session.pk))
        offset += len(chunk)
    return made


def cpu(work: Callable[[], Any]) -> tuple[float, Any]:
    started = time.process_time()
    result = work()
    return round((time.process_time() - started) * 1000, 1), result


def view(client, url: str, repeat: int) -> dict[str, Any]:
    first_ms, response = cpu(lambda: client.get(url))
    assert response.status_code == 200, (url, response.status_code)
    again = [cpu(lambda: client.get(url))[0] for _ in range(repeat)]
    return {"first_cpu_ms": first_ms, "again_cpu_ms": statistics.median(again), "html_bytes": len(response.content)}


def hostile(client, url: str, pages: list[int]) -> dict[str, Any]:
    """Pages nobody asked for yet, one request each."""
    timings = [cpu(lambda p=page: client.get(f"{url}{'&' if '?' in url else '?'}page={p}"))[0] for page in pages]
    return {"pages": pages, "median_cpu_ms": statistics.median(timings), "max_cpu_ms": max(timings)}


def figures(client, anonymous, project, user, session, made: list[Any], repeat: int) -> dict[str, Any]:
    from projects.scoping import project_scope
    from sessions_app import shares

    base = f"/p/{project.slug}/s/{session.pk}"
    whole = f"/p/{project.slug}/s/{made[0].pk}/conversation"
    with project_scope(project):
        share = f"/share/{shares.share_create(session=session, user=user, days=1).token}"
    client.get(base)  # the document decoded once, as after any view of the session
    client.get(whole)
    result: dict[str, Any] = {
        "raw_bytes": session.raw_size_bytes,
        "messages": session.message_count,
        "turns": session.turn_count,
        "whole_segments": len(made),
    }
    for name, url, reader in (
        ("session_page_1", base, client),
        ("session_page_50", f"{base}?page=50", client),
        ("session_role_user", f"{base}?role=user", client),
        ("whole_page_1", whole, client),
        ("whole_page_40", f"{whole}?page=40", client),
        ("share_page_1", share, anonymous),
        ("share_page_50", f"{share}?page=50", anonymous),
    ):
        result[name] = view(reader, url, repeat)
    walk = [60 + 7 * n for n in range(repeat)]
    result["hostile_session_pages"] = hostile(client, base, walk)
    result["hostile_whole_pages"] = hostile(client, whole, walk)
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--megabytes", type=float, default=7)
    parser.add_argument("--segments", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    setup()
    from django.conf import settings
    from django.test import Client

    from projects.models import Project, Role, User
    from projects.scoping import project_scope, unscoped
    from projects.services import membership_add
    from sessions_app import blobs
    from sessions_app.models import Session

    settings.ALLOWED_HOSTS = ["*"]
    settings.SESSIONLEDGER_SHARE_VIEW_RATE = "1000000/min"  # the cost of a view, not the budget
    tag = uuid.uuid4().hex[:8]
    user = User.objects.create_user(f"bench-huge-{tag}@example.com")
    project = Project.objects.create(slug=f"bench-huge-{tag}", name="Bench huge")
    with project_scope(project):
        membership_add(project=project, user=user, role=Role.MEMBER)
    try:
        raw = tiny_turns(args.megabytes)
        [session] = segments(project, user, raw, 1)
        made = segments(project, user, raw, args.segments)
        client = Client()
        client.force_login(user)
        result = figures(client, Client(), project, user, session, made, args.repeat)
    finally:
        with unscoped():
            keys = [
                k
                for s in Session.objects.filter(project=project)
                for k in (s.raw_storage_key, s.content_storage_key)
                if k
            ]
        blobs.delete(*keys)
        project.delete()
        user.delete()
    json.dump(result, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()

"""Server time of the session page against the floor of decoding its content blob.

    .venv/bin/python bench/bench_session_page.py [--turns 100] [--repeat 15] [--list-rows 2000]

A throwaway project gets one realistic session of ``--turns`` × 20 messages (Markdown replies
with code, thinking, Bash/Read/Edit/Grep calls with kilobytes of output), stored and processed
through the real ingest and worker code, plus ``--list-rows`` plain rows for the list page.
Timings are server-side: Django's test client runs the whole request (middleware, auth,
tenant scope, blob read, filtering, grouping, Markdown, templates) in-process.

- decode: gunzip + json.loads of the content blob (bytes already in memory) — the floor of any
  page that shows the document; ``fetch_decode`` adds reading the blob from storage.
- page: GET /p/{project}/s/{id} (first page), a later page, and two filtered views; rendered
  Markdown is memoised per process, so ``page_first_cold`` clears that memo before each request.
  ``rendered`` is what a reader pays who asks for a page nobody has rendered (page cache off);
  ``cached`` every later reader of it. ``first_reader`` is the first request for page 1 of a session
  just processed by the worker (a fresh session each time), which renders that page as it finishes.
- share: GET /share/{token} by an anonymous reader, the first page of a share link to the same session,
  every view after the first (the link's budget raised out of the way).
- list: GET /p/{project}/ (50 rows) and with a branch filter.

Prints one JSON object (best and median of N); the project and its blobs are deleted after.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

os.environ.setdefault("DEBUG", "false")  # production settings, as every bench of the service

from djangobench import project_remove, setup, stored_session

WORDS = ("the", "parser", "returns", "a", "value", "for", "each", "token", "test", "fails", "because", "module")
CODE = "```python\ndef tokenize(text):\n    for word in text.split():\n        yield word.lower()\n```"


def transcript(turns: int, output_lines: int = 40) -> bytes:
    """``turns`` turns of 20 messages: prompt, thinking, reply, 8 calls with results, summary; each Bash
    result has ``output_lines`` lines (``--turns 25 --output-lines 420``: ~509 messages, ~3.5 MB, the
    shape of a long real session)."""
    from tests.client.transcript_builder import TranscriptBuilder

    b = TranscriptBuilder(start="2026-02-10T09:00:00Z", step_seconds=3)
    for turn in range(1, turns + 1):
        b.prompt(f"Turn {turn}: make `tokenize` handle **unicode** input\n\n- keep it fast\n- add tests")
        b.thinking(" ".join(WORDS[(turn + i) % len(WORDS)] for i in range(60)))
        b.assistant_text(f"Plan for turn {turn}:\n\n1. read the module\n2. change it\n\n{CODE}")
        for call in range(4):
            b.new_response().tool_call(
                "Bash",
                {"command": f"pytest tests/test_tok.py -k case_{call}"},
                result="\n".join(
                    f"tests/test_tok.py::test_{turn}_{call}_{n} PASSED [{n % 100:3d}%]" for n in range(output_lines)
                ),
            )
            b.new_response().tool_call(*_file_call(turn, call))
        b.new_response().assistant_text(f"Turn {turn} done: all **{turn * 3}** tests pass.").turn_end()
    return b.build()


def _file_call(turn: int, call: int) -> tuple[str, dict[str, Any]]:
    path = f"/work/app/src/module_{turn}_{call}.py"
    if call % 2:
        return "Edit", {"file_path": path, "old_string": "return word\n" * 5, "new_string": "return word.lower()\n" * 5}
    return "Read", {"file_path": path}


def make_session(project, user, raw: bytes):
    """Stored through the real ingest service, then processed right here (no worker)."""
    from projects.scoping import project_scope
    from sessions_app.models import Session
    from sessions_app.processing import session_process

    session = stored_session(project, user, raw)
    with project_scope(project):
        session_process(session=session)
        return Session.objects.get(pk=session.pk)


def timed(repeat: int, work: Callable[[], object]) -> dict[str, float]:
    work()  # warm caches (templates, lexers) as a running server would have them
    timings = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        timings.append(time.perf_counter() - start)
    return {"best_ms": round(min(timings) * 1000, 2), "median_ms": round(statistics.median(timings) * 1000, 2)}


def page_figures(client, project, session, tiny, repeat: int) -> dict[str, Any]:
    from frontend.session_page.markdown import render_memo
    from sessions_app import blobs

    blob = blobs.get(session.content_storage_key)

    decode = timed(repeat, lambda: json.loads(gzip.decompress(blob)))
    figures: dict[str, Any] = {
        "messages": session.message_count,
        "turns": session.turn_count,
        "raw_bytes": session.raw_size_bytes,
        "content_gzip_bytes": len(blob),
        "decode": decode,
        "fetch_decode": timed(repeat, lambda: blobs.load_json_gz(session.content_storage_key)),
    }
    # The same page for a one-turn session: what every project page costs (auth, membership, tenant
    # scope, access log, layout) whatever the session's size.
    figures["page_tiny_session"] = timed(repeat, lambda: client.get(f"/p/{project.slug}/s/{tiny.pk}"))
    fixed = figures["page_tiny_session"]["median_ms"]
    base = f"/p/{project.slug}/s/{session.pk}"
    floor = figures["fetch_decode"]
    from frontend.session_page import page_cache

    key = page_cache.document_key(session)  # the decoded document as another page of the session gets it
    page_cache.keep(key, blobs.load_json_gz(session.content_storage_key), page_cache.DOCUMENT_SECONDS)
    kept = timed(repeat, lambda: page_cache.cached(key))
    figures["document_from_cache"] = {**kept, "ratio_to_read_decode": round(kept["median_ms"] / floor["median_ms"], 2)}
    with settings_override(SESSIONLEDGER_PAGE_CACHE_SECONDS=0):
        figures["page_first_cold"] = timed(repeat, lambda: (render_memo.cache_clear(), client.get(base)))
    for name, query in (("page_first", ""), ("page_5", "?page=5"), ("only_prompts", "?role=user"),
                        ("find_text", "?q=unicode")):  # fmt: skip
        response = client.get(base + query)
        assert response.status_code == 200, response.status_code
        # rendered: what the first reader of a page pays (frontend/session_page/page_cache.py off);
        # cached: every later one
        with settings_override(SESSIONLEDGER_PAGE_CACHE_SECONDS=0):
            page = {**timed(repeat, lambda q=query: client.get(base + q)), "html_bytes": len(response.content)}
        cached = timed(repeat, lambda q=query: client.get(base + q))
        page["ratio_to_decode"] = round(page["median_ms"] / decode["median_ms"], 2)
        page["ratio_to_decode_best"] = round(page["best_ms"] / decode["best_ms"], 2)
        page["ratio_beyond_fixed_to_decode"] = round((page["median_ms"] - fixed) / decode["median_ms"], 2)
        page["ratio_to_read_decode"] = round(page["median_ms"] / floor["median_ms"], 2)
        page["cached"] = {**cached, "ratio_to_read_decode": round(cached["median_ms"] / floor["median_ms"], 2)}
        figures[name] = page
    return figures


def first_reader(client, project, user, raw: bytes, repeat: int, floor_ms: float) -> dict[str, Any]:
    """The first GET of page 1 of ``repeat`` sessions, each just processed as the worker does it."""
    timings = []
    for _ in range(repeat):
        session = make_session(project, user, raw)
        gc.collect()  # what processing allocated is the worker's, not a web process's: collected before
        started = time.perf_counter()
        response = client.get(f"/p/{project.slug}/s/{session.pk}")
        timings.append(time.perf_counter() - started)
        assert response.status_code == 200, response.status_code
    median = statistics.median(timings) * 1000
    return {
        "best_ms": round(min(timings) * 1000, 2),
        "median_ms": round(median, 2),
        "ratio_to_read_decode": round(median / floor_ms, 2),
    }


def share_figures(project, user, session, repeat: int) -> dict[str, Any]:
    from django.test import Client

    from projects.scoping import project_scope
    from sessions_app import shares

    with project_scope(project):
        made = shares.share_create(session=session, user=user, days=1)
    reader, url = Client(), f"/share/{made.token}"
    first = reader.get(url)
    assert first.status_code == 200, first.status_code
    return {**timed(repeat, lambda: reader.get(url)), "html_bytes": len(first.content)}


def settings_override(**values: Any):
    from django.test import override_settings

    return override_settings(**values)


def seed_rows(project, user, count: int) -> None:
    from django.db import connection

    sql = """
    INSERT INTO sessions_app_session (id, project_id, kind, feature_branch, commit_hash, author_id, status,
      requested_status, agent, agent_version, agent_session_id, raw_storage_key, content_storage_key, subagents,
      size_bytes, raw_size_bytes, message_count, turn_count, title, summary, digest, files_touched, commit_message,
      patch_id, diff_stat, redaction, server_redaction, raw_sha256, processing_attempts, created_at, error)
    SELECT gen_random_uuid(), %(project)s, 'checkpoint', 'branch-' || (g %% 20), md5(g::text || 'bench-page')
      || substr(md5(g::text), 1, 8), %(author)s, 'complete', 'complete', 'claude-code', '2.1.39', '', 'k', 'k',
      '[]', 1000, 5000, 40, 4, 'Session ' || g, '', '{}', '[]', 'commit ' || g, '', '{}', '{}', '{}', '', 0,
      now() - (g || ' seconds')::interval, ''
    FROM generate_series(1, %(count)s) AS g"""
    with connection.cursor() as cursor:
        cursor.execute(sql, {"project": project.pk, "author": user.pk, "count": count})
        cursor.execute("ANALYZE sessions_app_session")


def list_figures(client, project, repeat: int) -> dict[str, Any]:
    return {
        name: timed(repeat, lambda q=query: client.get(f"/p/{project.slug}/{q}"))
        for name, query in (("newest", ""), ("branch", "?branch=branch-7"), ("older_page", "?limit=50&cursor="))
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--list-rows", type=int, default=2000)
    parser.add_argument("--output-lines", type=int, default=40, help="lines of each Bash result")
    args = parser.parse_args(argv)
    setup()
    from django.conf import settings
    from django.test import Client

    from projects.models import Project, Role, User
    from projects.scoping import project_scope
    from projects.services import membership_add

    settings.ALLOWED_HOSTS = ["*"]
    settings.SESSIONLEDGER_SHARE_VIEW_RATE = "1000000/min"  # the cost of a view, not the budget
    tag = uuid.uuid4().hex[:8]
    user = User.objects.create_user(f"bench-page-{tag}@example.com")
    project = Project.objects.create(slug=f"bench-page-{tag}", name="Bench page")
    with project_scope(project):
        membership_add(project=project, user=user, role=Role.ADMIN)
    try:
        session = make_session(project, user, transcript(args.turns, args.output_lines))
        tiny = make_session(project, user, transcript(1))
        client = Client()
        client.force_login(user)
        figures = {"session": page_figures(client, project, session, tiny, args.repeat)}
        floor = figures["session"]["fetch_decode"]["median_ms"]
        raw = transcript(args.turns, args.output_lines)
        figures["session"]["first_reader"] = first_reader(client, project, user, raw, args.repeat, floor)
        figures["session"]["share"] = share_figures(project, user, session, args.repeat)
        seed_rows(project, user, args.list_rows)
        figures["list"] = {"rows": args.list_rows + 1, **list_figures(client, project, args.repeat)}
    finally:
        project_remove(project, user)
    json.dump(figures, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()

"""Seed many sessions in one statement (INSERT … SELECT generate_series), for benches and tests.

Never the ORM: a million rows take about a minute this way. Rows are shaped for the lookups of
docs/scaling.md, with terms of known frequency:

- search: every row has ``session``, ``fix``, ``test``; ``deadlock`` is in one row in ten; ``b<g % 1000>``
  in one row in a thousand; ``u<g>`` (e.g. ``u4242``) in row ``g`` only. Prompts/commit words are weighted
  like the worker's (A–D).
- files: every row touched ``README.md``; ``src/mod<g % 1000>.py`` is in one row in a thousand and
  ``src/only<g>.py`` in row ``g`` only.
- commit: a distinct 40-hex hash per row, ``md5(g || 'c') || left(md5(g), 8)``.
- dates: captured every 5 minutes back from now (1e5 ≈ a year), uploaded now; one in seven on
  ``main``, the rest on feature branches of 500 consecutive rows (``feat/branch-<g / 500>``, each
  alive for under two days, as branches are); one in ten a task.
- context: ``context_text`` holds what the worker would store for the row's title, commit message,
  files and digest (``sessions_app.context.context_texts``; a test compares them), so the context
  digest reads the rows as it reads processed ones.
"""

from __future__ import annotations

from typing import Any

SEED_SQL = """
INSERT INTO sessions_app_session (id, project_id, kind, feature_branch, commit_hash, task_id, author_id, status,
  requested_status, agent, agent_version, agent_session_id, raw_storage_key, content_storage_key, subagents,
  size_bytes, raw_size_bytes, message_count, turn_count, title, summary, digest, files_touched, commit_message,
  patch_id, diff_stat, redaction, server_redaction, search_vector, created_at, captured_at, processed_at, error,
  raw_sha256, processing_attempts, message_uuids, context_text)
SELECT gen_random_uuid(), %(project)s, s.kind,
  CASE WHEN g %% 7 = 0 THEN 'main' ELSE 'feat/branch-' || (g / 500) END,
  md5(g::text || 'c') || left(md5(g::text), 8),
  CASE WHEN s.kind = 'task' THEN 'SL-' || g END,
  (%(authors)s::bigint[])[1 + (g * 31 %% cardinality(%(authors)s::bigint[]))],
  'complete', 'complete', 'claude-code', '2.1.39', md5(g::text), 'k', 'k', '[]',
  s.raw / 4, s.raw, s.turns * 9 + g %% 5, s.turns,
  'Session ' || g, 'Summary of session ' || g || '. Fix the failing test.',
  jsonb_build_object('prompts', jsonb_build_array('Fix the failing test ' || g), 'last_assistant_text', 'Done.',
    'tool_counts', jsonb_build_object(
      'Bash', jsonb_build_object('calls', 1 + g %% 23, 'errors', g %% 4),
      'Read', jsonb_build_object('calls', 1 + g %% 17, 'errors', 0),
      'Edit', jsonb_build_object('calls', g %% 11, 'errors', 0))),
  jsonb_build_array('README.md', 'src/mod' || (g %% 1000) || '.py', 'src/only' || g || '.py'),
  'Fix session ' || g, '', '{"files": 3, "insertions": 10, "deletions": 3}', '{}', '{}',
  ('session:1A fix:2B test:3B u' || g || ':4B b' || (g %% 1000) || ':5C '
    || CASE WHEN g %% 10 = 3 THEN 'deadlock' ELSE 'done' END || ':6C ' || %(filler)s)::tsvector,
  now(), now() - (g * 5 || ' minutes')::interval, now(), '', '', 0, '{}',
  jsonb_build_array(%(format)s::int, t.full, NULL, t.prompt || t.commit,
    t.title || t.commit || E'\\nSummary: Done.' || t.files)
FROM generate_series(%(start)s::bigint, %(stop)s::bigint) AS g,
LATERAL (SELECT CASE WHEN g %% 10 = 0 THEN 'task' ELSE 'checkpoint' END AS kind,
                1 + (g * 37 %% 97) %% 18 AS turns, 20000 + (g * 7907 %% 400000) AS raw, g::text AS n) AS s,
LATERAL (SELECT p.prompt, p.commit, p.files, p.prompt || p.commit || p.files || E'\\nAssistant''s last words: Done.'
                  AS full, E'\\nTitle: Session ' || s.n AS title
         FROM (SELECT E'\\n- Fix the failing test ' || s.n AS prompt, E'\\nCommit: Fix session ' || s.n AS commit,
                      E'\\nFiles: README.md, src/mod' || (g %% 1000) || '.py, src/only' || s.n || '.py' AS files
              ) AS p) AS t
"""

# Common words every session has (tool outputs, replies): rows as wide as small real ones.
FILLER = " ".join(
    f"{word}:{10 + n}D"
    for n, word in enumerate(
        [
            "pytest",
            "assert",
            "error",
            "pass",
            "fail",
            "import",
            "modul",
            "function",
            "class",
            "return",
            "def",
            "self",
            "true",
            "none",
            "list",
            "dict",
            "string",
            "json",
            "file",
            "path",
            "read",
            "write",
            "edit",
            "bash",
            "grep",
            "run",
            "command",
            "output",
            "result",
            "line",
            "code",
            "chang",
        ]
    )
)


def commit_of(g: int) -> str:
    import hashlib

    return hashlib.md5(f"{g}c".encode()).hexdigest() + hashlib.md5(str(g).encode()).hexdigest()[:8]


def seed_sessions(cursor: Any, *, project_id: object, author_ids: list[int], start: int, stop: int) -> None:
    """Rows ``start``..``stop`` (inclusive) of the pattern above into ``project_id``."""
    from sessions_app.context import CONTEXT_FORMAT

    cursor.execute(
        SEED_SQL,
        {
            "project": project_id,
            "authors": author_ids,
            "start": start,
            "stop": stop,
            "filler": FILLER,
            "format": CONTEXT_FORMAT,
        },
    )

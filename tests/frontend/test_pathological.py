"""Pathological transcripts (tests/frontend/pathological.py): each is processed by the real worker
code and shown on the session page within a generous bound (docs/security.md: every parse and
render step is linear in its input, with explicit bounds). The real figures: bench/bench_pathological.py.
"""

from __future__ import annotations

import time

import pytest
from django_scopes import scopes_disabled

from projects.scoping import project_scope
from sessions_app.models import Session
from sessions_app.processing import session_process
from tests.frontend.pathological import CASES, Case

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_a_pathological_transcript_is_processed_and_shown_in_bounded_time(case: Case, client, world, make_session):
    raw, subagents = case.build()
    session = make_session(world.project, world.member, raw, subagents=subagents, seed=case.name, process=False)

    started = time.perf_counter()
    with project_scope(world.project):
        session_process(session=session)
    worker_seconds = time.perf_counter() - started
    with scopes_disabled():
        session = Session.objects.get(pk=session.pk)
    assert session.status == "complete", session.error
    assert worker_seconds < case.worker_seconds

    client.force_login(world.viewer)
    started = time.perf_counter()
    response = client.get(f"/p/{world.project.slug}/s/{session.pk}?{case.query}")
    page_seconds = time.perf_counter() - started
    assert response.status_code == 200
    assert page_seconds < case.page_seconds

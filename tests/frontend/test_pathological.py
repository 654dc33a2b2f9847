"""Pathological transcripts (tests/frontend/pathological.py): each is processed by the real worker
code and shown on the session page, and the work both do grows linearly with the attack
(docs/security.md: every parse and render step is linear in its input, with explicit bounds).

Work, not time (tests/work.py): the Python lines run in our code, Markdown-it, Pygments and
difflib at n and 2n. The real timings: bench/bench_pathological.py.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Callable
from pathlib import Path

import markdown_it
import pygments
import pytest
from django_scopes import scopes_disabled

from frontend.session_page.markdown import render_memo
from projects.scoping import project_scope
from sessions_app.models import Session
from sessions_app.processing import session_process
from tests.frontend.pathological import CASES, Case
from tests.work import PROJECT, assert_linear

pytestmark = pytest.mark.django_db

ROOTS = (*PROJECT, f"{Path(markdown_it.__file__).parent}/", f"{Path(pygments.__file__).parent}/", difflib.__file__)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_a_pathological_transcript_is_processed_and_shown_with_linear_work(case: Case, client, world, make_session):
    client.force_login(world.viewer)
    serial = itertools.count()

    def stored(n: int | None) -> Session:
        raw, subagents = case.build() if n is None else case.build(n, case.sizes[1] if case.sizes else 1)
        seed = f"{case.name}-{n}-{next(serial)}"
        return make_session(world.project, world.member, raw, subagents=subagents, seed=seed, process=False)

    def processed(session: Session) -> None:
        with project_scope(world.project):
            session_process(session=session)
        with scopes_disabled():
            session = Session.objects.get(pk=session.pk)
        assert session.status == "complete", session.error

    def shown(session: Session) -> None:
        render_memo.cache_clear()  # every page renders its messages: no memo carried between runs
        response = client.get(f"/p/{world.project.slug}/s/{session.pk}?{case.query}")
        assert response.status_code == 200

    if case.sizes is None:  # not a size attack: the bench's input, processed and shown
        session = stored(None)
        processed(session)
        shown(session)
        return

    def worker(n: int) -> Callable[[], None]:
        session = stored(n)
        return lambda: processed(session)

    def page(n: int) -> Callable[[], None]:
        session = stored(n)
        processed(session)
        return lambda: shown(session)

    assert_linear(worker, case.sizes[0], roots=ROOTS)
    assert_linear(page, case.sizes[0], roots=ROOTS)
    if case.in_c:  # the bench's size, where only a regex backtracking in C could hang (tests/work.py)
        session = stored(None)
        processed(session)
        shown(session)

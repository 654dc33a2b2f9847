from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django_scopes import scopes_disabled

from projects.models import Project, User
from projects.scoping import project_scope
from sessions_app.models import Session
from sessions_app.processing import session_process
from tests.client.transcript_builder import TranscriptBuilder
from tests.uploads import commit_hash, metadata_for, upload


def conversation(prompt: str, reply: str = "Done.", **builder_options: Any) -> bytes:
    return TranscriptBuilder(**builder_options).prompt(prompt).assistant_text(reply).turn_end().build()


@pytest.fixture
def ingest(api_as) -> Callable[..., Session]:
    """Upload through the real API as ``user`` and process synchronously (no worker needed)."""

    def make(
        project: Project,
        user: User,
        prompt: str = "Add capture",
        *,
        seed: str | None = None,
        raw: bytes | None = None,
        **metadata: Any,
    ) -> Session:
        raw = raw if raw is not None else conversation(prompt)
        meta = metadata_for(raw, commit_hash=commit_hash(seed or prompt), **metadata)
        response = upload(api_as(user), project.slug, raw, meta)
        assert response.status_code == 202, response.content
        with scopes_disabled():
            session = Session.objects.select_related("project", "author").get(pk=response.json()["id"])
        with project_scope(project):
            session_process(session=session)
            return Session.objects.get(pk=session.pk)

    return make

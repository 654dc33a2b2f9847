"""Every test base has two projects and an outsider (docs/design.md §10 rule 3)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import redis
from django_scopes import scopes_disabled
from rest_framework.test import APIClient

from projects.models import Project, Role, User
from projects.scoping import project_scope
from sessions_app.models import Session
from sessions_app.processing import session_process
from tests import realfixtures
from tests.client.transcript_builder import TranscriptBuilder
from tests.factories import ProjectFactory, UserFactory, make_member, make_token
from tests.uploads import commit_hash, metadata_for, upload


@dataclass
class World:
    project: Project
    other_project: Project
    admin: User
    member: User
    viewer: User
    other_admin: User
    outsider: User

    def user(self, role: str) -> User | None:
        return {
            "admin": self.admin,
            "member": self.member,
            "viewer": self.viewer,
            "outsider": self.outsider,
            "anonymous": None,
        }[role]


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix: None) -> None:
    """With two logins (governance/dbroles.py) the harness creates, migrates and truncates the test
    database, which is the owner's work; the runtime login is tested by connecting as it
    (tests/governance/test_audit_integrity.py)."""
    from django.conf import settings

    if settings.DATABASE_ROLES_SPLIT:
        owner = settings.DATABASES["owner"]
        settings.DATABASE_RUNTIME_PASSWORD = settings.DATABASES["default"]["PASSWORD"]
        settings.DATABASES["default"].update(USER=owner["USER"], PASSWORD=owner["PASSWORD"])


@pytest.fixture
def world(db: None) -> World:
    with scopes_disabled():
        project, other = ProjectFactory(slug="acme-api"), ProjectFactory(slug="globex-web")
        return World(
            project=project,
            other_project=other,
            admin=make_member(project, Role.ADMIN, email="alice@example.com"),
            member=make_member(project, Role.MEMBER, email="mallory@example.com"),
            viewer=make_member(project, Role.VIEWER, email="victor@example.com"),
            other_admin=make_member(other, Role.ADMIN, email="bob@example.com"),
            outsider=UserFactory(email="charlie@example.com"),
        )


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


@pytest.fixture
def api_as():
    """``api_as(user)`` → an APIClient sending that user's fresh Bearer token (None → anonymous)."""

    def make(user: User | None, **token_options: object) -> APIClient:
        client = APIClient()
        if user is not None:
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_token(user, **token_options)}")
        return client

    return make


@pytest.fixture
def redis_commands(monkeypatch) -> Iterator[list[str]]:
    """The Redis commands sent (the real client still sends them)."""
    sent: list[str] = []
    original = redis.Redis.execute_command

    def spy(self, *args, **options):
        sent.append(str(args[0]))
        return original(self, *args, **options)

    monkeypatch.setattr(redis.Redis, "execute_command", spy)
    return sent


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


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


# The files that take longest, longest first. pytest-xdist hands files out in collection order, and
# the schema fuzz alone (collected near the end) took 190-350 s: started last, it ran on after every
# other file had finished. Started first, the other worker takes the rest meanwhile.
LONGEST_FILES = (
    "tests/test_api_schema_fuzz.py",
    "tests/e2e/test_outages.py",
    "tests/frontend/browser/test_injection.py",
    "tests/frontend/browser/test_accessibility.py",
    "tests/e2e/test_faults.py",
    "tests/e2e/test_long_download.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The longest files first (``LONGEST_FILES``); tests marked ``real_transcripts`` skip when the real
    transcripts are absent (tests/realfixtures.py)."""
    rank = {path: index for index, path in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # stable: files stay whole
    needing = [item for item in items if item.get_closest_marker(realfixtures.MARKER)]
    config.stash[_REAL_TRANSCRIPT_TESTS] = len(needing)
    if needing and not realfixtures.available():
        skip = pytest.mark.skip(reason=f"no real transcripts at {realfixtures.REAL_TRANSCRIPTS}")
        for item in needing:
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    """One line saying whether the tests on real transcripts ran, so a skip cannot hide in a green run."""
    count = config.stash.get(_REAL_TRANSCRIPT_TESTS, 0)
    if not count:
        return
    if realfixtures.available():
        terminalreporter.write_line(f"real transcripts: {count} tests ran on {realfixtures.REAL_TRANSCRIPTS}")
    else:
        terminalreporter.write_line(
            f"real transcripts: {count} tests SKIPPED — none at {realfixtures.REAL_TRANSCRIPTS} "
            "(set SESSIONLEDGER_FIXTURES to the folder of Claude Code .jsonl files)",
            yellow=True,
            bold=True,
        )


_REAL_TRANSCRIPT_TESTS = pytest.StashKey[int]()

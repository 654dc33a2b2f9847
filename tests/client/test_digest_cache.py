"""The SessionStart digest comes from a per-repository cache the uploader refreshes after each upload
and a detached process refreshes for the next start, so a server that answers in 2 s — longer than
the hook's 0.5 s deadline — still gets it into the session (docs/client.md "SessionStart")."""

from __future__ import annotations

import time
import uuid
from urllib.parse import urlsplit

import pytest

from sessionledger.fsutil import is_locked
from tests.client.conftest import ClaudeSession
from tests.client.test_context_hooks import (
    context_of,
    history,  # noqa: F401 - earlier sessions of the project, on this branch and others
    start,
)
from tests.e2e.tcp_proxy import OutageProxy

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def slow_server(ledger):
    """The live server behind a link on which every answer waits 2 s."""
    parts = urlsplit(ledger.url)
    proxy = OutageProxy((parts.hostname or "127.0.0.1", parts.port or 80), delay=2.0)
    return f"http://127.0.0.1:{proxy.port}"


@pytest.mark.usefixtures("history")
def test_a_server_slower_than_the_hook_still_gets_the_digest_into_every_start(
    ledger, slow_server, repo, claude: ClaudeSession, client_env
) -> None:
    client_env.vars.update(SESSIONLEDGER_SERVER=slow_server, SESSIONLEDGER_UPLOAD_TIMEOUT="60")
    claude.prompt("add the parser")
    (repo / "parser.py").write_text("def parse():\n    return 1\n")
    claude.bash("git add -A && git commit -q -m 'Add the parser'")  # uploads, then refreshes the cache
    assert client_env.queue() == []

    starts = [start(client_env, repo, source, SESSIONLEDGER_CONTEXT_TIMEOUT=None) for source in ("startup", "resume")]

    for result in starts:
        text = context_of(result)
        assert "Title: update the changelog" in text and "Files: CHANGES.md" in text, text


def refresh_settled(client_env, seconds: float = 90) -> None:
    """Until the detached refresh a start began has written the cache and let go of its lock: the
    time between two session starts, which is minutes in real use."""
    folder = client_env.state_dir / "context"
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        locks = list(folder.glob("*.lock")) if folder.exists() else []
        if list(folder.glob("*.json")) and not any(is_locked(str(lock)) for lock in locks):
            return
        time.sleep(0.1)


@pytest.mark.usefixtures("history")
def test_nineteen_of_twenty_starts_get_the_digest_from_a_server_answering_in_two_seconds(
    ledger, slow_server, repo, client_env
) -> None:
    """No upload primes the cache here: the first start finds nothing cached and the server too
    slow, and starts a detached refresh; every later start reads the cache."""
    client_env.vars.update(SESSIONLEDGER_SERVER=slow_server)
    injected = 0
    for _ in range(20):
        result = start(client_env, repo, "startup", session_id=str(uuid.uuid4()), SESSIONLEDGER_CONTEXT_TIMEOUT=None)
        if result.stdout.strip() and "Title: update the changelog" in context_of(result):
            injected += 1
        refresh_settled(client_env)

    assert injected >= 19, f"the digest reached {injected} of 20 starts"

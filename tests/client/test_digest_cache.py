"""The SessionStart digest comes from a per-repository cache the uploader refreshes after each upload,
so a server that answers in 2 s — longer than the hook's 0.5 s deadline — still gets it into the
session (docs/client.md "SessionStart")."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

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

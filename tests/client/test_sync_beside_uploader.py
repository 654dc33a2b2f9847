"""`sync` while the background uploader is sending a big segment over a slow link: it says which
segment that uploader is sending and how far it got, and returns without waiting for it; when the
uploader died mid-send, `sync` takes over and sends the segment (docs/client.md "sync").

No seconds are asserted: "returns without waiting" is shown by the uploader still holding its lock,
still sending, when `sync` has already answered.
"""

from __future__ import annotations

import os
import re

import pytest

from tests.client.conftest import expected_upload, head
from tests.client.slow_server import ThrottledProxy
from tests.client.test_deadlines import commit, locked

pytestmark = pytest.mark.django_db(transaction=True)

BIG = os.urandom(400_000).hex()  # random: gzip cannot shrink it, so the body stays ~1 MB


@pytest.fixture
def slow_link(ledger):
    proxy = ThrottledProxy(ledger.url, rate=64 * 1024)
    yield proxy
    proxy.close()


def uploader_pid(client_env) -> int:
    return int((client_env.state_dir / "uploader.lock").read_text().split()[0])


def sending(link: ThrottledProxy) -> bool:
    """The upload's body is on its way (more than any small request before it)."""
    return link.received > 200_000


def test_sync_says_what_the_background_uploader_is_sending_and_does_not_wait_for_it(
    ledger, slow_link, repo, claude, client_env
) -> None:
    client_env.vars.update(SESSIONLEDGER_SERVER=slow_link.url, SESSIONLEDGER_UPLOAD_TIMEOUT="300")
    client_env.vars.pop("SESSIONLEDGER_UPLOAD_INLINE")
    claude.prompt(BIG)
    commit(claude, "a")
    ledger.wait_for(lambda: sending(slow_link))

    sync = client_env.cli("sync", cwd=repo)

    assert locked(client_env.state_dir / "uploader.lock")  # the uploader is still at it: sync did not wait
    assert sync.returncode != 0
    said = re.search(r"is sending checkpoint (\w+): (\d+\.\d) of (\d+\.\d) MB", sync.stdout)
    assert said, sync.stdout + sync.stderr
    # bytes handed to the link so far: on loopback the kernel's buffers may already hold them all
    assert head(repo).startswith(said[1]) and 0 < float(said[2]) <= float(said[3])
    ledger.wait_for(lambda: client_env.queue() == [], seconds=120)  # and it finishes by itself
    assert ledger.raw(ledger.session_for(head(repo))) == expected_upload(claude.content())

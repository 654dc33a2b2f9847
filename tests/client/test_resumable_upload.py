"""A big segment on a link that drops again and again still arrives, in parts, and no part the
server already holds is ever sent again (docs/client.md "Slow links")."""

from __future__ import annotations

import os
import re

import pytest

from tests.client.conftest import expected_upload, head
from tests.client.slow_server import CuttingProxy
from tests.client.test_deadlines import commit

pytestmark = pytest.mark.django_db(transaction=True)

PART = 16 * 1024
BIG = os.urandom(200_000).hex()  # random: gzip cannot shrink it below ~200 KB, a dozen parts


@pytest.fixture
def flaky_link(ledger, settings):
    settings.SESSIONLEDGER_UPLOAD_PART_BYTES = PART
    proxy = CuttingProxy(ledger.url, rate=200_000, cut_every=50_000)
    yield proxy
    proxy.close()


def test_a_segment_arrives_through_a_link_cut_again_and_again_without_resending_stored_parts(
    ledger, flaky_link, repo, claude, client_env
) -> None:
    client_env.vars.update(
        SESSIONLEDGER_SERVER=flaky_link.url,
        SESSIONLEDGER_RESUMABLE_THRESHOLD="65536",
        SESSIONLEDGER_RETRY_BASE_SECONDS="1",
    )
    claude.prompt(BIG)
    commit(claude, "a")

    result = client_env.cli("sync", "--wait", "--timeout", "120", cwd=repo)

    assert client_env.queue() == [], result.stdout + result.stderr
    assert ledger.raw(ledger.session_for(head(repo))) == expected_upload(claude.content())
    assert flaky_link.cuts >= 3
    stored: set[str] = set()
    for request, answer in flaky_link.exchanges:
        part = re.match(r"PUT (\S+/parts/\d+) ", request or "")
        if part is None:
            continue
        assert part[1] not in stored, f"{part[1]} was sent again after the server stored it"
        if answer and answer.split()[1] == "200":
            stored.add(part[1])
    assert len(stored) >= 10  # it went in parts


def test_a_link_that_drops_before_any_part_arrives_says_how_far_the_upload_got(
    ledger, settings, repo, claude, client_env
) -> None:
    settings.SESSIONLEDGER_UPLOAD_PART_BYTES = PART
    link = CuttingProxy(ledger.url, rate=200_000, cut_every=8_000)  # never a whole part
    client_env.vars.update(SESSIONLEDGER_SERVER=link.url, SESSIONLEDGER_RESUMABLE_THRESHOLD="65536")
    try:
        claude.prompt(BIG)
        commit(claude, "a")
    finally:
        link.close()

    [entry] = client_env.queue()
    reason = client_env.status(entry)["reason"]
    assert re.match(r"sent \d+ of \d+ KB, resuming \(", reason), reason
    shown = client_env.cli("status", cwd=repo).stdout
    assert "resuming" in shown

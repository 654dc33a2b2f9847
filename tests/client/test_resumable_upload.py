"""A big segment on a link that drops again and again still arrives, in parts, and no part the
server already holds is ever sent again (docs/client.md "Slow links")."""

from __future__ import annotations

import json
import os
import re
import signal

import pytest

from tests.client.conftest import expected_upload, head
from tests.client.slow_server import CuttingProxy, ThrottledProxy
from tests.client.test_deadlines import commit
from tests.client.test_sync_beside_uploader import uploader_pid

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


def test_status_shows_how_much_of_a_body_in_parts_the_server_holds_when_the_uploader_died(
    ledger, settings, repo, claude, client_env
) -> None:
    """The lid closes mid-upload (the uploader is killed): `status` says how far it got."""
    settings.SESSIONLEDGER_UPLOAD_PART_BYTES = PART
    link = ThrottledProxy(ledger.url, rate=32_000)
    client_env.vars.update(SESSIONLEDGER_SERVER=link.url, SESSIONLEDGER_RESUMABLE_THRESHOLD="65536")
    client_env.vars.pop("SESSIONLEDGER_UPLOAD_INLINE")  # the detached uploader, as installed
    try:
        claude.prompt(BIG)
        commit(claude, "a")
        [entry] = client_env.queue()
        record = entry / "upload.json"
        ledger.wait_for(lambda: record.exists() and json.loads(record.read_text())["received_bytes"] > 0)
        os.kill(uploader_pid(client_env), signal.SIGKILL)
    finally:
        link.close()

    held = json.loads(record.read_text())
    shown = client_env.cli("status", cwd=repo).stdout
    said = re.search(r"\(sent (\d+) of (\d+) KB in parts\)", shown)
    assert said, shown
    assert (int(said[1]), int(said[2])) == (round(held["received_bytes"] / 1e3), round(held["size"] / 1e3))
    assert 0 < held["received_bytes"] < held["size"]

"""A server that answers a byte at a time holds nothing: every request has a total deadline, the
uploader lets go of its lock, a stuck lock holder is replaced, and the queue drains once the server
is well again (docs/client.md "Deadlines").

No seconds are asserted: the slow server trickles for ever, so a command without a total deadline
never finishes; `subprocess.run(timeout=120)` in the fixtures is only the test's own hang guard.
"""

from __future__ import annotations

import fcntl
import re
import subprocess
import sys

import pytest

from tests.client.conftest import ClaudeSession, expected_upload, head
from tests.client.slow_server import SlowServer

pytestmark = pytest.mark.django_db(transaction=True)

SHORT = {"SESSIONLEDGER_UPLOAD_TIMEOUT": "1", "SESSIONLEDGER_COMMAND_TIMEOUT": "1"}


@pytest.fixture
def slow(ledger):
    server = SlowServer(ledger.url)
    yield server
    server.close()


def commit(claude: ClaudeSession, name: str, **env: str | None) -> None:
    claude.prompt(f"add {name}")
    (claude.cwd / f"{name}.py").write_text(f"{name} = 1\n")
    claude.bash(f"git add -A && git commit -q -m 'Add {name}'", **env)


def locked(path) -> bool:
    with open(path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        return False


def test_a_trickling_server_holds_no_command_and_the_queue_drains_once_it_recovers(
    ledger, slow, repo, claude, client_env
) -> None:
    client_env.vars.update(SHORT, SESSIONLEDGER_SERVER=slow.url)

    commit(claude, "a")  # the hook's inline upload meets the trickle and gives up
    [entry] = client_env.queue()
    assert client_env.status(entry)["state"] == "pending"
    assert "did not answer within 1 s" in client_env.status(entry)["reason"]

    status = client_env.cli("status", "--check", cwd=repo)
    assert "did not answer within" in status.stdout  # said, not hung on
    init = client_env.cli("init", "--project", ledger.slug, cwd=repo)
    assert init.returncode == 0 and "could not check the project" in init.stdout, init.stdout + init.stderr
    listing = client_env.cli("list", cwd=repo)
    assert listing.returncode != 0 and "did not answer within 1 s" in listing.stderr
    sync = client_env.cli("sync", cwd=repo)
    assert sync.returncode != 0 and "did not answer within 1 s" in sync.stdout
    assert slow.trickled >= 4 and len(client_env.queue()) == 1

    slow.recover()
    drained = client_env.cli("sync", cwd=repo, SESSIONLEDGER_UPLOAD_TIMEOUT="60")  # a loaded test box

    assert drained.returncode == 0, drained.stdout + drained.stderr
    assert client_env.queue() == []
    assert ledger.raw(ledger.session_for(head(repo))) == expected_upload(claude.content())


def test_a_small_segment_the_server_never_answers_says_it_was_sent_whole(
    ledger, slow, repo, claude, client_env
) -> None:
    """Under `resumable_threshold` a body goes in one request: the message still says how far it
    got, so a server that received everything and never answered is not mistaken for a slow link."""
    client_env.vars.update(SHORT, SESSIONLEDGER_SERVER=slow.url, SESSIONLEDGER_PROJECT=ledger.slug)  # no lookup first

    commit(claude, "a")

    [entry] = client_env.queue()
    reason = client_env.status(entry)["reason"]
    assert re.fullmatch(r"sent (\d+) of \1 KB; \S+ did not answer within 1 s", reason), reason
    assert "sent " in client_env.cli("status", cwd=repo).stdout


def test_the_detached_uploader_lets_go_of_the_lock_and_a_later_segment_goes_after_recovery(
    ledger, slow, repo, claude, client_env
) -> None:
    client_env.vars.update(SHORT, SESSIONLEDGER_SERVER=slow.url, SESSIONLEDGER_UPLOADER_MAX_SECONDS="4")
    client_env.vars.pop("SESSIONLEDGER_UPLOAD_INLINE")
    lock = client_env.state_dir / "uploader.lock"

    commit(claude, "a")
    ledger.wait_for(lambda: slow.trickled)  # the detached uploader is in its request…
    ledger.wait_for(lambda: not locked(lock), seconds=90)  # …and leaves, lock released
    assert len(client_env.queue()) == 1

    slow.recover()
    # A healthy server on a loaded test box may answer after a 1 s deadline (the segment stored, the
    # answer late), which would leave a segment in backoff after this run's 4 s: room, as a real client has.
    client_env.vars.update(SESSIONLEDGER_UPLOAD_TIMEOUT="60", SESSIONLEDGER_UPLOADER_MAX_SECONDS="120")
    first = head(repo)
    commit(claude, "b")  # the next hook's uploader sends the new segment; the first goes when its backoff ends

    ledger.wait_for(lambda: len(ledger.sessions()) == 2, seconds=90)
    assert {s.commit_hash for s in ledger.sessions()} == {first, head(repo)}
    ledger.wait_for(lambda: client_env.queue() == [])


HOLD = """
import os, sys, time
from sessionledger import paths
from sessionledger.fsutil import FileLock
lock = FileLock(paths.uploader_lock(), timeout=0)
assert lock.acquire()
os.pwrite(lock.fd, f"{os.getpid()} {time.time() + float(sys.argv[1]):.0f}\\n".encode(), 0)
print("held", flush=True)
time.sleep(3600)
"""


def hold_lock(client_env, deadline_from_now: float) -> subprocess.Popen:
    """Another uploader holding the lock, stuck (in a request of an older client, say)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(deadline_from_now)], env=client_env.env(), stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


def test_an_uploader_stuck_past_its_deadline_is_stopped_and_its_lock_taken_over(
    ledger, repo, claude, client_env
) -> None:
    stuck = hold_lock(client_env, deadline_from_now=-3600)
    try:
        commit(claude, "a")
        assert stuck.wait(timeout=60) != 0  # stopped, not waited for
        assert ledger.raw(ledger.session_for(head(repo))) == expected_upload(claude.content())
        assert "past its deadline" in client_env.log()
    finally:
        stuck.kill()
        stuck.wait()


def test_an_uploader_within_its_deadline_keeps_its_lock(ledger, repo, claude, client_env) -> None:
    busy = hold_lock(client_env, deadline_from_now=3600)
    try:
        commit(claude, "a")
        assert busy.poll() is None  # still running, still the holder
        assert len(client_env.queue()) == 1 and ledger.sessions() == []
    finally:
        busy.kill()
        busy.wait()
    assert client_env.cli("sync", cwd=repo).returncode == 0
    assert ledger.session_for(head(repo))

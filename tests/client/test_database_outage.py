"""PostgreSQL "restarts" in the middle of a burst of commits: nothing is lost.

The web server (gunicorn) reaches the database through a proxy that drops every connection
and refuses new ones for the outage. Uploads during it are refused (503) and stay queued;
after it, `sessionledger sync --wait` drains the queue and every commit has its session.
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit, urlunsplit

import pytest
import requests
from django.conf import settings

from tests.client.conftest import head
from tests.e2e import web_server
from tests.e2e.tcp_proxy import OutageProxy, database_target
from tests.e2e.web_server import gunicorn
from tests.factories import make_token

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
COMMITS = 9


@pytest.fixture
def proxied_server(world):
    """gunicorn on the test database, through an outage proxy; yields (url, proxy)."""
    configured = settings.DATABASES["default"]
    proxy = OutageProxy(database_target(configured["HOST"], configured["PORT"]))
    database = urlsplit(web_server.tests_database_url())
    url = urlunsplit(database._replace(netloc=f"{database.username or 'postgres'}@127.0.0.1:{proxy.port}"))
    with gunicorn("-w", "2", "--log-level", "warning", DATABASE_URL=url, DATABASE_CONN_MAX_AGE="0") as base:
        yield base, proxy


def _wait_for_a_refused_upload(client_env) -> None:
    """The detached uploader runs when the machine lets it: wait until it has tried during the outage."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if any(
            client_env.status(entry).get("attempts", 0) >= 1
            for entry in client_env.queue()
            if (entry / "status.json").exists()
        ):
            return
        time.sleep(0.2)
    raise AssertionError("no upload was attempted during the outage")


def test_a_database_restart_during_a_burst_loses_nothing(
    world, client_env, claude, repo, proxied_server, start_worker
) -> None:
    base, proxy = proxied_server
    client_env.vars.update(SESSIONLEDGER_SERVER=base, SESSIONLEDGER_TOKEN=make_token(world.member))
    start_worker()
    commits = []
    for n in range(COMMITS):
        if n == 3:
            proxy.outage()
        if n == 6:
            # asked while the database is still away: after it, the uploader may drain the queue any moment
            assert client_env.queue(), "uploads during the outage must wait in the queue"
            proxy.restore()
        claude.prompt(f"change {n}")
        (repo / f"f{n}.txt").write_text(f"{n}\n")
        claude.bash(f"git add -A && git commit -q -m 'Change {n}'")
        commits.append(head(repo))
        if 3 <= n < 6:
            _wait_for_a_refused_upload(client_env)
    sync = client_env.cli("sync", "--wait")
    assert sync.returncode == 0, sync.stdout + sync.stderr
    assert client_env.queue() == []
    token = client_env.vars["SESSIONLEDGER_TOKEN"]
    for commit in commits:
        found = requests.get(
            f"{base}/api/v1/projects/{world.project.slug}/commits/{commit}",
            headers={"Authorization": f"Bearer {token}"},
            timeout=10,
        ).json()["results"]
        assert len(found) == 1, f"commit {commit[:10]} has {len(found)} sessions"

"""`sessionledger pr [NUMBER]`: the conversations behind the current branch's pull request (or PR
NUMBER), from the live server; the forge's and teammates' text reaches no terminal as escapes."""

from __future__ import annotations

import json
import re

import pytest
from django_scopes import scopes_disabled

from integrations.models import PullRequest
from tests.client.conftest import git, head
from tests.integrations.records import pull_request
from tests.uploads import commit_hash

pytestmark = pytest.mark.django_db(transaction=True)

ESCAPES = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07\x1b[2J\x9b2J\u202e"
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture
def branch_pr(ledger, repo, claude, client_env, world):
    """Branch `retry-upload`: one captured commit and one by hand, on PR #7 (a force push dropped one)."""
    git(repo, "checkout", "-q", "-b", "retry-upload", env=client_env.env())
    claude.prompt("Make the upload retry")
    (repo / "retry.py").write_text("RETRIES = 3\n")
    claude.bash("git add -A && git commit -q -m 'Retry the upload'")
    captured = head(repo)
    (repo / "notes.txt").write_text("by hand\n")
    git(repo, "add", "-A", env=client_env.env())
    git(repo, "commit", "-q", "-m", "Notes", env=client_env.env())
    ledger.session_for(captured)
    pr = pull_request(world.project, number=7, commits=[captured, head(repo)], dropped=(commit_hash("gone"),))
    with scopes_disabled():
        PullRequest.objects.filter(pk=pr.pk).update(head_ref="retry-upload", title=f"Retry {ESCAPES}on 503")
    return captured


def test_pr_lists_the_conversations_of_the_current_branchs_pr(branch_pr, ledger, repo, client_env) -> None:
    result = client_env.cli("pr", cwd=repo)

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("#7 Retry") and lines[0].endswith("on 503  (open)")
    assert lines[2] == "http://testserver/p/acme-api/pr/7"  # the server's SITE_URL
    assert "Conversations (1):" in lines
    session = ledger.session_for(branch_pr)
    assert f"    http://testserver/p/acme-api/s/{session.pk}/conversation" in lines
    assert f"    commits: {branch_pr[:8]}" in lines
    assert not UNSAFE.search(result.stdout + result.stderr)


def test_pr_by_number_and_as_json(branch_pr, repo, client_env) -> None:
    git(repo, "checkout", "-q", "main", env=client_env.env())  # another branch: the number decides

    result = client_env.cli("pr", "#7", "--json", cwd=repo)

    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["number"] == 7 and [c["sha"] for c in data["conversations"][0]["commits"]] == [branch_pr]
    assert [c["still_in_pr"] for c in data["commits"]] == [True, True, False]
    assert not UNSAFE.search(result.stdout)


def test_pr_says_clearly_when_there_is_none(ledger, repo, client_env) -> None:
    missing = client_env.cli("pr", "8", cwd=repo)
    assert missing.returncode == 1 and missing.stderr.strip() == "sessionledger: no pull request #8 in acme-api"
    branch = client_env.cli("pr", cwd=repo)
    assert branch.returncode == 1 and "no pull request known for branch main in acme-api" in branch.stderr
    bad = client_env.cli("pr", "seven", cwd=repo)
    assert bad.returncode == 2 and "not a pull request number" in bad.stderr

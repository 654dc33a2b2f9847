"""A commit typed in another terminal after the agent's last shell command, with the agent's hooks
only (no git hook): the session's `end` segment carries the commit's attribution record, so what
the server stores for the commit says, line by line, what local `blame` says (docs/attribution.md
"Commits no hook saw")."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from sessionledger.core import attribution_lookup
from tests.client.attribution_helpers import agent_edit, agent_write, human_edit, validate_agent_trace
from tests.client.conftest import git, head
from tests.client.test_attribution import CALC, blame, owners
from tests.client.test_session_tails import start_session

pytestmark = pytest.mark.django_db(transaction=True)


def commit_by_hand(repo: Path, client_env, message: str) -> str:
    """`git commit` in a terminal of its own: no agent's shell, no hook of ours runs."""
    git(repo, "add", "-A", env=client_env.env())
    git(repo, "commit", "-q", "-m", message, env=client_env.env())
    return head(repo)


def server_owners(ledger, sha: str, path: str, lines: int) -> list[str]:
    """Per line of `path` at `sha`, from the records the server stores for the commit."""
    answer = ledger.api.get(f"/api/v1/projects/{ledger.slug}/commits/{sha}/attribution").json()
    found = []
    for number in range(1, lines + 1):
        hit = attribution_lookup.find(answer["records"], path, number, "", sha)
        found.append("unknown" if hit is None else hit.step if hit.contributor == "ai" else hit.contributor)
    return found


def test_a_commit_typed_elsewhere_after_the_last_shell_command_is_attributed_on_the_server(
    ledger, repo, claude, client_env
) -> None:
    claude.prompt("write a calculator")
    write = agent_write(claude, repo, "calc.py", CALC)
    human_edit(repo, "calc.py", "    return a + b\n", "    return b + a  # the human's order\n")
    claude.prompt("add multiplication")
    mul = agent_edit(
        claude, repo, "calc.py", "    return a - b\n", "    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
    )
    sha = commit_by_hand(repo, client_env, "Calculator, committed by hand")
    claude.end()

    expected = [write, "human", write, write, write, write, mul, mul, mul, mul]
    assert owners(blame(client_env, repo, "calc.py")) == expected
    assert server_owners(ledger, sha, "calc.py", len(expected)) == expected
    [record] = ledger.api.get(f"/api/v1/projects/{ledger.slug}/commits/{sha}/attribution").json()["records"]
    validate_agent_trace(record)
    assert record["metadata"]["dev.sessionledger"].get("source") != "transcript"  # stored, not matched
    end = ledger.session_for(sha, kind="end")
    assert end.commit_message.startswith("Calculator, committed by hand")


def test_a_commit_the_tool_hook_captured_is_not_attributed_again_by_the_end(ledger, repo, claude, client_env) -> None:
    claude.prompt("write a calculator")
    agent_write(claude, repo, "calc.py", CALC)
    claude.bash("git add -A && git commit -q -m 'Calculator'")
    claude.prompt("thanks, that is all")
    claude.end()

    sha = head(repo)
    answer = ledger.api.get(f"/api/v1/projects/{ledger.slug}/commits/{sha}/attribution").json()
    assert len(answer["records"]) == 1  # the checkpoint's; the end segment after it has none
    assert ledger.session_for(sha).kind == "checkpoint"
    assert not ledger.sessions(kind="end", commit_hash=sha)[0].commit_message


def test_a_commit_typed_elsewhere_before_the_session_was_killed_is_attributed_by_the_sweep(
    ledger, repo, claude, client_env
) -> None:
    claude.prompt("start the calculator")
    agent_write(claude, repo, "README.md", "# app\n\nA calculator.\n")
    claude.bash("git add -A && git commit -q -m 'Describe the app'")  # captured: the session has a repository
    claude.prompt("now write it")
    write = agent_write(claude, repo, "calc.py", CALC)
    sha = commit_by_hand(repo, client_env, "Calculator, committed by hand")
    an_hour_ago = time.time() - 3600  # the session was killed: no SessionEnd, idle since
    os.utime(claude.path, (an_hour_ago, an_hour_ago))

    start_session(client_env, repo)  # its uploader sweeps the tail as `end`

    expected = [write] * len(CALC.splitlines())
    assert server_owners(ledger, sha, "calc.py", len(expected)) == expected
    assert owners(blame(client_env, repo, "calc.py")) == expected

"""Attribution end to end in real git repositories: an agent's edits, a human edit between them,
capture on commit, a rebase and a squash — `blame` and `why` name the right step for every line,
and what the server returns is valid Agent Trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings
from django_scopes import scopes_disabled

from projects.scoping import project_scope
from sessions_app.models import Attribution, Session
from sessions_app.processing import session_process
from tests.client.attribution_helpers import agent_edit, agent_write, human_edit, validate_agent_trace
from tests.client.conftest import git, head

pytestmark = pytest.mark.django_db(transaction=True)

CALC = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"


def process_all() -> None:
    with scopes_disabled():
        sessions = list(Session.objects.select_related("project", "author").filter(content_storage_key=""))
    for session in sessions:
        with project_scope(session.project):
            session_process(session=session)


def blame(client_env, repo: Path, *args: str) -> list[dict]:
    result = client_env.cli("blame", *args, "--json", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


def owners(rows: list[dict]) -> list[str]:
    """Per line: the step's message uuid, or "human" / "unknown"."""
    return [row["url"].rsplit("/", 1)[-1] if row["contributor"] == "ai" else row["contributor"] for row in rows]


def calculator_session(claude, repo: Path) -> tuple[dict[str, str], list[str]]:
    """Two agent steps and a human edit between them and after, committed by the agent."""
    claude.prompt("write a calculator")
    write = agent_write(claude, repo, "calc.py", CALC)
    human_edit(repo, "calc.py", "    return a + b\n", "    return b + a  # the human's order\n")
    claude.prompt("add multiplication")
    mul = agent_edit(
        claude, repo, "calc.py", "    return a - b\n", "    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
    )
    human_edit(repo, "calc.py", "    return a * b\n", "    return a * b\nHUMAN_CONSTANT = 42\n")
    claude.bash("git add -A && git commit -q -m 'Calculator'")
    expected = [write, "human", write, write, write, write, mul, mul, mul, mul, "human"]
    return {"write": write, "mul": mul}, expected


def test_blame_names_the_step_or_the_human_for_every_line(ledger, repo, claude, client_env) -> None:
    steps, expected = calculator_session(claude, repo)

    rows = blame(client_env, repo, "calc.py")

    assert owners(rows) == expected
    first = rows[0]
    assert first["model"].startswith("anthropic/") and first["step"].startswith("t1·" + steps["write"][:8])
    assert rows[6]["step"].startswith("t2·" + steps["mul"][:8])
    assert first["url"] == f"{settings.SITE_URL}/p/{ledger.slug}/m/{steps['write']}"  # this server's permalink
    assert blame(client_env, repo, "-L", "9,11", "calc.py") and owners(
        blame(client_env, repo, "-L", "9,11", "calc.py")
    ) == [
        steps["mul"],
        steps["mul"],
        "human",
    ]


def test_blame_prints_a_readable_column_per_line(ledger, repo, claude, client_env) -> None:
    steps, _ = calculator_session(claude, repo)
    result = client_env.cli("blame", "calc.py", "-L", "1,2", cwd=repo)
    first, second = result.stdout.splitlines()
    sha = head(repo)[:8]
    assert (
        first.startswith(f"{sha} AI    ")
        and f"t1·{steps['write'][:8]}" in first
        and first.endswith("1) def add(a, b):")
    )
    assert second.startswith(f"{sha} human ") and second.endswith("2)     return b + a  # the human's order")


def test_the_stored_record_is_valid_agent_trace_and_served_for_the_commit(ledger, repo, claude) -> None:
    calculator_session(claude, repo)
    sha = head(repo)

    answer = ledger.api.get(f"/api/v1/projects/{ledger.slug}/commits/{sha}/attribution").json()

    [record] = answer["records"]
    validate_agent_trace(record)
    assert record["vcs"] == {"type": "git", "revision": sha} and record["version"] == "0.1.0"
    [entry] = record["files"]
    assert entry["path"] == "calc.py"
    vendor = record["metadata"]["dev.sessionledger"]
    assert (vendor["added_lines"], vendor["ai_lines"], vendor["human_lines"]) == (11, 9, 2)
    session = ledger.session_for(sha)
    assert vendor["session"]["id"] == str(session.pk)
    with scopes_disabled():
        stored = Attribution.objects.get(session=session)
    assert (stored.added_lines, stored.ai_lines) == (11, 9)
    by_session = ledger.api.get(f"/api/v1/projects/{ledger.slug}/sessions/{session.pk}/attribution").json()
    assert by_session["id"] == record["id"]


def test_why_tells_the_prompt_the_words_around_and_the_tool_call(ledger, repo, claude, client_env) -> None:
    steps, _ = calculator_session(claude, repo)
    process_all()

    result = client_env.cli("why", "calc.py:9", cwd=repo)

    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "Written by the agent (anthropic/" in out and f"/m/{steps['mul']}" in out
    assert "Prompt:\n  add multiplication" in out and "Working on: add multiplication" in out
    assert "Tool call: Edit" in out and "def mul(a, b):" in out
    human = client_env.cli("why", "calc.py:2", cwd=repo)
    assert "Written by a human" in human.stdout


def feature_branch(claude, repo: Path, client_env) -> tuple[list[str], str]:
    """Two captured commits on `feature` (the calculator, then division); main moves on."""
    git(repo, "checkout", "-q", "-b", "feature", env=client_env.env())
    _, expected = calculator_session(claude, repo)
    claude.prompt("add division")
    div = agent_edit(
        claude, repo, "calc.py", "HUMAN_CONSTANT = 42\n", "HUMAN_CONSTANT = 42\n\n\ndef div(a, b):\n    return a / b\n"
    )
    claude.bash("git add -A && git commit -q -m 'Division'")
    git(repo, "checkout", "-q", "main", env=client_env.env())
    (repo / "NOTES.md").write_text("upstream\n")
    git(repo, "add", "-A", env=client_env.env())
    git(repo, "commit", "-q", "-m", "Upstream", env=client_env.env())
    git(repo, "checkout", "-q", "feature", env=client_env.env())
    return [*expected, div, div, div, div], div


def test_blame_and_why_follow_a_rebase_and_a_squash(ledger, repo, claude, client_env) -> None:
    expected, div = feature_branch(claude, repo, client_env)
    assert owners(blame(client_env, repo, "calc.py")) == expected

    git(repo, "rebase", "-q", "main", env=client_env.env())
    assert client_env.cli("relink", cwd=repo).returncode == 0
    assert owners(blame(client_env, repo, "calc.py")) == expected

    git(repo, "reset", "-q", "--soft", "main", env=client_env.env())
    git(repo, "commit", "-q", "-m", "Calculator, squashed", env=client_env.env())
    assert client_env.cli("relink", cwd=repo).returncode == 0
    rows = blame(client_env, repo, "calc.py")
    assert {row["commit"] for row in rows} == {head(repo)}
    assert owners(rows) == expected
    process_all()
    why = client_env.cli("why", "calc.py:15", cwd=repo)
    assert f"/m/{div}" in why.stdout and "Prompt:\n  add division" in why.stdout


def test_a_commit_captured_before_attribution_is_matched_against_its_transcript(
    ledger, repo, claude, client_env
) -> None:
    steps, expected = calculator_session(claude, repo)
    with scopes_disabled():
        Attribution.objects.all().delete()  # as if captured by a client without attribution
    process_all()

    assert owners(blame(client_env, repo, "calc.py")) == expected
    from sessionledger.commands.blame import added_rows

    files = [{"path": "calc.py", "lines": added_rows(str(repo), head(repo), "calc.py")}]
    matched = ledger.api.post(
        f"/api/v1/projects/{ledger.slug}/commits/{head(repo)}/attribution/match", {"files": files}, format="json"
    )
    assert matched.status_code == 200
    validate_agent_trace(matched.json())
    assert matched.json()["metadata"]["dev.sessionledger"]["source"] == "transcript"
    why = client_env.cli("why", "calc.py:1", cwd=repo)
    assert f"/m/{steps['write']}" in why.stdout and "matched against the stored transcript" in why.stdout


def test_lines_of_commits_without_sessions_are_unknown(ledger, repo, client_env) -> None:
    rows = blame(client_env, repo, "README.md")
    assert owners(rows) == ["unknown"]


def test_an_edit_from_before_the_previous_commit_is_found_when_its_file_is_committed(
    ledger, repo, claude, client_env
) -> None:
    claude.prompt("write both modules")
    first = agent_write(claude, repo, "a.py", "A_VALUE = 'written for the first commit'\n")
    early = agent_write(claude, repo, "b.py", "B_VALUE = 'written early, committed later'\n")
    claude.bash("git add a.py && git commit -q -m 'Only a'")
    claude.prompt("now commit the rest")
    claude.bash("git add -A && git commit -q -m 'Then b'")

    assert owners(blame(client_env, repo, "a.py")) == [first]
    assert owners(blame(client_env, repo, "b.py")) == [early]  # a step of the previous segment
    process_all()
    why = client_env.cli("why", "b.py:1", cwd=repo)
    assert f"/m/{early}" in why.stdout and "Prompt:\n  write both modules" in why.stdout

    with scopes_disabled():
        Attribution.objects.all().delete()  # the server's transcript fallback reads earlier segments too
    process_all()
    assert owners(blame(client_env, repo, "b.py")) == [early]

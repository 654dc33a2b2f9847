"""The GitHub Actions workflow users copy from docs/examples: it parses, asks for no more than it
needs (a read-only token, comments on pull requests), runs nothing but the client's own commands
— and the command it runs posts one comment, then updates that same comment on the next push."""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

import pytest
import yaml

from sessionledger.cli import COMMANDS, build_parser
from tests.client.test_attribution import calculator_session

WORKFLOW = Path(__file__).parents[2] / "docs" / "examples" / "sessionledger-pr-comment.yml"
EXPRESSION = re.compile(r"\$\{\{[^}]*\}\}")


def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def steps() -> list[dict]:
    [job] = workflow()["jobs"].values()
    return job["steps"]


def test_the_workflow_runs_on_each_pull_request_push_with_least_privilege() -> None:
    data = workflow()
    triggers = data[True] if True in data else data["on"]  # YAML 1.1 reads a bare `on` as true
    assert set(triggers["pull_request"]["types"]) >= {"opened", "synchronize"}
    assert data["permissions"] == {"contents": "read", "pull-requests": "write"}
    text = WORKFLOW.read_text()
    assert set(re.findall(r"secrets\.(\w+)", text)) == {"SESSIONLEDGER_TOKEN"}
    assert {step["uses"].split("@")[0] for step in steps() if "uses" in step} == {
        "actions/checkout",
        "actions/setup-python",
    }


def test_every_command_it_runs_is_the_clients_own() -> None:
    runs = [step["run"] for step in steps() if "run" in step]
    assert runs, "the workflow runs nothing"
    client_commands = []
    for run in runs:
        for line in filter(None, (part.strip() for part in run.splitlines())):
            words = shlex.split(EXPRESSION.sub("X", line))
            if words[:2] == ["pip", "install"]:
                assert len(words) == 3, f"installs something besides the client: {line}"
                continue
            assert words[0] == "sessionledger", f"not a client command: {line}"
            assert words[1] in COMMANDS
            build_parser().parse_args(words[1:])  # every option it passes exists
            client_commands.append(words[1:])
    assert client_commands == [["pr-links", "origin/X..HEAD", "--ai-share", "--gh", "--update", "--pr", "X"]]


def fake_gh(bin_dir: Path, log: Path, existing: list[dict]) -> None:
    """A `gh` that records its calls and answers the comment listing with `existing`."""
    (bin_dir / "comments.json").write_text(json.dumps(existing))
    script = f"""#!/bin/sh
echo "$@" >> {log}
case "$1 $2" in
  "api --paginate") cat {bin_dir / "comments.json"} ;;
  "api -X") cat > {log}.body ;;
  "pr comment") cat > {log}.body; echo https://github.com/acme/acme-api/pull/7#issuecomment-1 ;;
esac
"""
    (bin_dir / "gh").write_text(script)
    (bin_dir / "gh").chmod(0o755)


@pytest.mark.django_db(transaction=True)
def test_the_workflows_command_posts_one_comment_then_updates_it(ledger, repo, claude, client_env, tmp_path) -> None:
    [step] = [s for s in steps() if "sessionledger pr-links" in s.get("run", "")]
    calculator_session(claude, repo)
    bin_dir, log = tmp_path / "bin", tmp_path / "gh.log"
    bin_dir.mkdir()
    path = os.pathsep.join([str(bin_dir), os.environ["PATH"]])
    words = shlex.split(EXPRESSION.sub("7", step["run"]).replace("origin/7", "HEAD~1"))

    fake_gh(bin_dir, log, [])
    first = client_env.cli(*words[1:], cwd=repo, PATH=path)
    assert first.returncode == 0, first.stderr
    assert "pr comment 7 --body-file -" in log.read_text()
    body = Path(f"{log}.body").read_text()
    assert body.startswith("### Sessionledger") and "| 9 of 11 (82%) |" in body
    assert "The agent wrote 9 of the 11 lines added by attributed commits (82%)." in body

    log.unlink()
    fake_gh(bin_dir, log, [{"id": 41, "body": "LGTM"}, {"id": 42, "body": body}])
    second = client_env.cli(*words[1:], cwd=repo, PATH=path)
    assert second.returncode == 0, second.stderr
    calls = log.read_text().splitlines()
    assert calls[-1] == "api -X PATCH repos/{owner}/{repo}/issues/comments/42 -F body=@-"
    assert not any(call.startswith("pr comment") for call in calls)

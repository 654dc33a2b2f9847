"""A fork of a Gemini CLI chat recorded as one `.json` document (before v0.39) is written as a
`.json` document, which the CLI that recorded it can resume (docs/agents.md "Resume, fork,
restore"); the fork keeps the turns it was asked for."""

from __future__ import annotations

import json
import re

import pytest

from sessionledger.core.formats import get_format
from tests.client.test_agents_capture import GEMINI, commit_by_hand, gemini_file, install_git_hook

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("name", [n for n in GEMINI if n.endswith(".json")][:1])
def test_a_fork_of_a_json_gemini_chat_is_a_json_document_with_the_turns_kept(
    ledger, repo, client_env, tmp_path, name
) -> None:
    install_git_hook(client_env, repo)
    _, data = gemini_file(client_env, repo, name)
    doc = json.loads(data)
    commit_by_hand(client_env, repo, "one.txt")

    worktree = tmp_path / "forked"
    result = client_env.cli("fork", doc["sessionId"], "--turn", "1", "--worktree", str(worktree), cwd=repo)

    assert result.returncode == 0, result.stdout + result.stderr
    new_id = re.search(r"gemini --resume (\S+)", result.stdout).group(1)
    [written] = (client_env.home / ".gemini").rglob(f"session-*-{new_id[:8]}.*")
    assert written.suffix == ".json"
    forked = json.loads(written.read_bytes())  # one document, as the recording CLI writes and reads them
    assert forked["sessionId"] == new_id and isinstance(forked["messages"], list)
    parsed = get_format("gemini").parse(written.read_bytes())
    original = get_format("gemini").parse(data)
    assert len(parsed.prompts) == 1 and parsed.prompts[0] == original.prompts[0]

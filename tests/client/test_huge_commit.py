"""A commit beyond the server's metadata limits (a message over 100,000 characters, more than
10,000 files, a path over 1,024 characters) still uploads its conversation: the client cuts the
metadata to fit, says so in the commit message and in `status`, and the queue ends empty."""

from __future__ import annotations

import json

import pytest

from sessionledger import metalimits
from tests.client.conftest import expected_upload, git, head

pytestmark = pytest.mark.django_db(transaction=True)

FILES = metalimits.MAX_FILES_TOUCHED + 40


def test_a_commit_too_big_for_the_metadata_limits_keeps_its_conversation(
    ledger, repo, claude, client_env, tmp_path
) -> None:
    claude.prompt("Vendor the generated fixtures")
    generated = repo / "gen"
    generated.mkdir()
    for n in range(FILES):  # one content: git stores one blob, not 10,040 (4 s less on `git add`)
        (generated / f"f{n:05}.txt").write_text("generated\n")
    deep = repo.joinpath(*["d" * 200] * 5)
    deep.mkdir(parents=True)
    (deep / "long.txt").write_text("x\n")
    message = tmp_path / "message.txt"
    message.write_text("Vendor the fixtures\n\n" + "Every generated file, listed. " * 4000)  # git keeps 120,020
    git(repo, "add", "-A")
    claude.bash(f"git commit -q -F {message}")
    claude.end()

    session = ledger.session_for(head(repo))
    status = client_env.cli("status", "--json", cwd=repo)
    shown = client_env.cli("status", cwd=repo)

    assert ledger.raw(session) == expected_upload(claude.content())[: session.end_offset]
    assert len(session.commit_message) <= metalimits.MAX_COMMIT_MESSAGE
    assert session.commit_message.startswith("Vendor the fixtures\n\nEvery generated file, listed.")
    assert "[… Sessionledger: commit message cut to its first" in session.commit_message
    assert len(session.files_touched) == metalimits.MAX_FILES_TOUCHED
    assert all(len(path) <= metalimits.MAX_PATH_CHARS for path in session.files_touched)
    report, kept_end = json.loads(status.stdout), "\n\n[… Sessionledger"
    assert report["queue"] == []  # nothing rejected, nothing left behind
    assert report["recent"][0]["cut"] == [
        f"commit message cut to its first {session.commit_message.index(kept_end):,} of 120,020 characters",
        f"files_touched lists 10,000 of the commit's {FILES + 1:,} paths",
    ]
    assert "Cut:      checkpoint" in shown.stdout and "files_touched lists 10,000" in shown.stdout

"""The context digest names each piece of work once (docs/design.md §6): an amended commit folded
with its original, a /clear folded with the commit made after it, no entry with nothing to say,
the closing summary of each even in the short digest, and every piece of the branch at the
default short budget before anything from other branches."""

from __future__ import annotations

import pytest

from projects.scoping import project_scope
from sessions_app.context import context_digest
from tests.client.transcript_builder import TranscriptBuilder
from tests.conftest import conversation

pytestmark = pytest.mark.django_db(transaction=True)
BRANCH = "feat/export"
SHORT_BUDGET = 2_000  # the SessionStart hook's default (docs/client.md "SessionStart")


def _digest(world, **query):
    with project_scope(world.project):
        return context_digest(project=world.project, branch=BRANCH, **query)


def _work(ingest, world, prompt: str, summary: str, **metadata):
    raw = conversation(prompt, reply=summary)
    return ingest(world.project, world.member, prompt, raw=raw, feature_branch=BRANCH, **metadata)


def test_an_amended_commit_and_its_original_are_one_entry(world, ingest) -> None:
    original = _work(ingest, world, "export the ledger as CSV", "CSV export added in export.py.", seed="orig")
    amended = _work(
        ingest,
        world,
        "fix the commit message",
        "Amended the commit message.",
        seed="amend",
        amends=original.commit_hash,
        agent_session_id="a2",
    )

    digest = _digest(world)

    assert [c.session.pk for c in digest.included] == [amended.pk]
    assert f"Amends: {original.commit_hash[:10]}" in digest.text


def test_a_clear_and_the_commit_made_after_it_are_one_entry(world, ingest) -> None:
    raw = conversation("write the exporter", reply="The exporter is ready to commit.")
    common = {"raw": raw, "feature_branch": BRANCH, "agent_session_id": "c1", "end_offset": len(raw)}
    ingest(world.project, world.member, "x", kind="clear", seed="at-clear", commit_message="", **common)
    committed = ingest(world.project, world.member, "x", seed="after-clear", **common)

    digest = _digest(world)

    assert [c.session.pk for c in digest.included] == [committed.pk]


def test_an_end_with_nothing_to_say_is_left_out(world, ingest) -> None:
    work = _work(ingest, world, "export the ledger as CSV", "CSV export added.", seed="work")
    silent = TranscriptBuilder("e1", cwd="/app").meta("Caveat: nothing typed").build()
    ingest(
        world.project,
        world.member,
        raw=silent,
        kind="end",
        seed="end",
        feature_branch=BRANCH,
        agent_session_id="e1",
        commit_message="",
        files_touched=[],
    )

    digest = _digest(world)

    assert [c.session.pk for c in digest.included] == [work.pk]
    assert "## end" not in digest.text


def test_every_piece_of_work_on_the_branch_fits_the_short_budget_with_its_closing_summary(world, ingest) -> None:
    files = [f"src/export/module_{n}_with_a_long_descriptive_name.py" for n in range(12)]
    pieces = [
        _work(
            ingest,
            world,
            f"step {n}: " + "make the export stream rows instead of building the whole file in memory " * 2,
            f"Finished step {n}: rows now stream to the response; tests cover empty and huge ledgers.",
            seed=f"piece{n}",
            agent_session_id=f"s{n}",
            commit_message=f"Stream export rows, step {n}",
            files_touched=files,
        )
        for n in range(4)
    ]
    ingest(world.project, world.admin, "something on another branch", feature_branch="main", seed="other")

    digest = _digest(world, budget=SHORT_BUDGET)

    assert len(digest.text) <= SHORT_BUDGET
    assert [c.session.pk for c in digest.included][:4] == [p.pk for p in reversed(pieces)]
    for n in range(4):
        assert f"Summary: Finished step {n}: rows now stream" in digest.text


def test_five_commits_and_an_epic_of_a_branch_all_fit_the_default_budget_each_with_a_summary(world, ingest) -> None:
    """Real entries are long: a 70-character commit subject, closing words of several sentences, a
    long title and many files. At 2,000 characters all five commits of the branch and the epic
    closed by a command alone are named, each with its summary, before anything else."""
    files = [f"client/sessionledger/module_{n}_with_a_long_name.py" for n in range(8)]
    closing = (
        "Done: the uploader now resumes from the last stored part after a cut link, & status shows "
        "how much was sent; tests cover a proxy that cuts every few seconds and a server restart in between."
    )
    commits = [
        _work(
            ingest,
            world,
            f"piece {n}: make the upload resumable across cut connections, keeping parts already stored <safe>",
            f"{closing} (piece {n})",
            seed=f"commit{n}",
            agent_session_id=f"c{n}",
            commit_message=f"Resume a cut upload from its last stored part, piece {n} of the five steps",
            files_touched=files,
        )
        for n in range(5)
    ]
    epic_raw = (
        TranscriptBuilder("epic", cwd="/app")
        .prompt("wrap up the epic")
        .new_response()
        .tool_call("Bash", {"command": "bd close SL-10 --reason 'all five steps landed'"}, result="Closed SL-10")
        .build()
    )
    epic = ingest(
        world.project,
        world.member,
        "wrap up the epic",
        raw=epic_raw,
        kind="task",
        task_id="SL-10",
        seed="epic",
        feature_branch=BRANCH,
        agent_session_id="epic",
        commit_message="",
        files_touched=[],
    )
    ingest(world.project, world.admin, "something on another branch", feature_branch="main", seed="other")

    digest = _digest(world, budget=SHORT_BUDGET)

    assert len(digest.text) <= SHORT_BUDGET
    assert [c.session.pk for c in digest.included][:6] == [epic.pk, *[c.pk for c in reversed(commits)]]
    blocks = digest.text.split("<teammate-record>\n")[1:]
    assert all("\nSummary: " in block for block in blocks[:6]), digest.text
    for n in range(5):
        assert f"Resume a cut upload from its last stored part, piece {n}" in digest.text
    assert "Summary: ended with Bash: bd close SL-10 --reason 'all five steps landed'" in digest.text
    assert "&amp" not in digest.text.replace("&amp;", "")  # a cut never splits an escape

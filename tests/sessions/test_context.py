"""The AI context digest: relevance order, the budget, and who can see what."""

from __future__ import annotations

import pytest


def _context(client, slug: str, query: str = "") -> dict:
    response = client.get(f"/api/v1/projects/{slug}/context{query}")
    assert response.status_code == 200, response.content
    return response.json()


@pytest.fixture
def history(world, ingest) -> dict:
    return {
        "recent": ingest(
            world.project, world.admin, "unrelated recent work", feature_branch="main", files_touched=["docs/readme.md"]
        ),
        "files": ingest(
            world.project,
            world.admin,
            "tweak the parser for speed",
            feature_branch="perf",
            files_touched=["src/parser.py"],
        ),
        "branch_old": ingest(
            world.project,
            world.member,
            "start the capture feature: never block the hook",
            feature_branch="feat/capture",
        ),
        "branch_new": ingest(world.project, world.member, "keep offsets per transcript", feature_branch="feat/capture"),
    }


def test_same_branch_first_then_shared_files_then_recent(world, api_as, history) -> None:
    digest = _context(api_as(world.viewer), world.project.slug, "?branch=feat/capture&files=src/parser.py")
    order = [s["id"] for s in digest["sessions"]]
    expected = [history[k].pk for k in ("branch_new", "branch_old", "files", "recent")]
    assert order == [str(pk) for pk in expected]
    assert [s["reason"] for s in digest["sessions"]] == ["same branch", "same branch", "same files", "recent"]
    text = digest["text"]
    assert text.index("keep offsets per transcript") < text.index("never block the hook") < text.index("parser")
    assert "Commit: Add session capture" in text and world.member.email in text


@pytest.mark.parametrize("budget", [200, 500, 1200, 8000])
def test_the_budget_is_never_exceeded(world, api_as, history, budget: int) -> None:
    digest = _context(api_as(world.viewer), world.project.slug, f"?branch=feat/capture&budget={budget}")
    assert len(digest["text"]) == digest["length"] <= budget
    if budget >= 1200:
        assert digest["sessions"]


def test_another_projects_sessions_never_appear(world, api_as, ingest, history) -> None:
    ingest(world.other_project, world.other_admin, "globex secret roadmap", feature_branch="feat/capture")
    digest = _context(api_as(world.admin), world.project.slug, "?branch=feat/capture&budget=50000")
    assert "globex" not in digest["text"] and len(digest["sessions"]) == 4
    assert api_as(world.outsider).get(f"/api/v1/projects/{world.project.slug}/context").status_code == 404

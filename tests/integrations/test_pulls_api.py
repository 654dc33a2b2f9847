"""``GET /api/v1/projects/{project}/pulls`` and ``…/pulls/{number}``: a project's pull requests and one
with its commits, conversations, AI share and cost — to the project's members and tokens only."""

from __future__ import annotations

import pytest
from django_scopes import scopes_disabled

from integrations.models import PullRequest
from projects.models import Membership, Role, Scope
from sessions_app.models import Attribution, Session
from tests.frontend.conftest import make_session  # noqa: F401 - re-exported fixture
from tests.integrations.records import pull_request
from tests.integrations.review_story import DROPPED, KEPT, SECOND, review_story
from tests.uploads import commit_hash

BASE = "/api/v1/projects/acme-api/pulls"


@pytest.fixture
def reviewed(world, make_session, api_as) -> dict[str, Session]:  # noqa: F811 - the fixture re-exported above
    return review_story(world, make_session, api_as)


def test_the_pr_answers_its_commits_conversations_and_the_sum_of_their_records(world, reviewed, api_as) -> None:
    data = api_as(world.viewer, scopes=[Scope.READ]).get(f"{BASE}/7").json()

    with scopes_disabled():
        held = Attribution.objects.filter(session__commit_hash__in=[KEPT, SECOND])
        ai, added = sum(a.ai_lines for a in held), sum(a.added_lines for a in held)
    share = data["ai_share"]
    assert (share["ai_lines"], share["added_lines"], share["human_lines"], share["unknown_lines"]) == (ai, added, 3, 0)
    assert share["ai_share"] == 0.75 and share["records"] == 2
    assert {(m["model"], m["lines"]) for m in share["by_model"]} == {
        ("anthropic/claude-sonnet-4-5", 6),
        ("anthropic/claude-opus-4-6", 3),
    }
    assert [(c["sha"], c["still_in_pr"]) for c in data["commits"]] == [(KEPT, True), (SECOND, True), (DROPPED, False)]
    conversations = data["conversations"]
    assert [len(c["sessions"]) for c in conversations] == [2, 1]  # the two segments are one conversation
    assert conversations[0]["web_url"] == f"http://testserver/p/acme-api/s/{reviewed['kept'].pk}/conversation"
    assert conversations[1]["commits"] == [{"sha": DROPPED, "still_in_pr": False}]
    assert data["web_url"] == "http://testserver/p/acme-api/pr/7"
    assert data["usage"]["output_tokens"] > 0 and data["usage"]["cost_usd"] > 0


def test_the_list_finds_a_branchs_pr_open_first(world, api_as) -> None:
    closed = pull_request(world.project, number=3, commits=[commit_hash("old")])
    pull_request(world.project, number=7, commits=[commit_hash("new")])
    with scopes_disabled():
        PullRequest.objects.filter(pk=closed.pk).update(state="closed")
    api = api_as(world.viewer)

    found = api.get(BASE, {"head": "retry-upload"}).json()["results"]
    assert [pr["number"] for pr in found] == [7, 3]
    assert api.get(BASE, {"head": "elsewhere"}).json()["results"] == []
    assert [pr["number"] for pr in api.get(BASE, {"state": "closed"}).json()["results"]] == [3]
    assert api.get(BASE, {"state": "sideways"}).status_code == 400


@pytest.mark.parametrize("who", ["outsider", "other_admin", "restricted_token"])
def test_an_outsider_or_a_token_of_another_project_gets_404(world, api_as, who) -> None:
    pull_request(world.project, number=7, commits=[commit_hash("kept")])
    if who == "restricted_token":
        with scopes_disabled():
            Membership.objects.create(project=world.other_project, user=world.member, role=Role.MEMBER)
        client = api_as(world.member, project=world.other_project)
    else:
        client = api_as(getattr(world, who))
    assert client.get(f"{BASE}/7").status_code == 404
    assert client.get(BASE).status_code == 404


def test_another_projects_pr_of_the_same_number_stays_there(world, api_as) -> None:
    pull_request(world.project, number=7, commits=[commit_hash("kept")])
    assert api_as(world.other_admin).get("/api/v1/projects/globex-web/pulls/7").status_code == 404
    assert api_as(world.viewer).get(f"{BASE}/8").status_code == 404
    assert api_as(None).get(f"{BASE}/7").status_code == 401

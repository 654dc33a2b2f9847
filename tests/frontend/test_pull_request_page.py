"""``/p/{project}/pr/{number}``: a pull request's AI share (its commits' records summed), its
conversations stitched across segments, files, tokens and cost, its commits — to members only."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django_scopes import scopes_disabled

from sessions_app.attribution.selectors import attribution_summary
from sessions_app.models import AccessLog, Attribution, Session
from tests.integrations.records import pull_request
from tests.integrations.review_story import DROPPED, ELSEWHERE, KEPT, SECOND, review_story
from tests.uploads import commit_hash


@pytest.fixture
def reviewed(world, make_session, api_as) -> dict[str, Session]:
    return review_story(world, make_session, api_as)


def row(html: str, label: str) -> list[str]:
    found = re.search(rf'<th scope="row">{label}</th>((?:<td>[^<]*</td>)+)</tr>', html)
    assert found, f"no row {label}"
    return re.findall(r"<td>([^<]*)</td>", found[1])


def test_the_pr_share_is_the_sum_of_the_records_of_the_commits_it_holds(world, reviewed) -> None:
    client = Client()
    client.force_login(world.viewer)

    html = client.get("/p/acme-api/pr/7").content.decode()

    with scopes_disabled():
        held = Attribution.objects.filter(session__commit_hash__in=[KEPT, SECOND])
        ai, added = sum(a.ai_lines for a in held), sum(a.added_lines for a in held)
    assert (ai, added) == (9, 12)
    assert row(html, "Agent") == [str(ai), "75%"]
    assert row(html, "Human") == [str(added - ai), "25%"]
    assert row(html, "Unknown") == ["0", "0%"]
    assert f"The {added} lines this pull request adds, from 2 attribution records" in html
    assert re.search(r"<td>claude-code</td><td[^>]*>anthropic/claude-sonnet-4-5</td><td>6</td>", html)
    assert re.search(r"<td>claude-code</td><td[^>]*>anthropic/claude-opus-4-6</td><td>3</td>", html)
    files = html[html.index('id="pr-files"') :]
    assert re.search(r"app\.py</td><td>5</td><td>3</td><td>0</td>", files)
    assert "old.py" not in files and "other.py" not in html  # a dropped commit adds nothing to the PR
    agent_only = html[html.index('id="pr-agent-only"') : html.index('id="pr-usage"')]
    assert "backoff.py" in agent_only and "app.py" not in agent_only


def test_the_pr_lists_only_its_conversations_stitched_across_their_segments(world, reviewed) -> None:
    client = Client()
    client.force_login(world.viewer)

    html = client.get("/p/acme-api/pr/7").content.decode()

    conversations = html[html.index("<h2>Conversations</h2>") : html.index('id="pr-files"')]
    assert conversations.count('class="card pr-conversation"') == 2  # one per agent session
    whole = f"/p/acme-api/s/{reviewed['kept'].pk}/conversation"
    assert f'href="{whole}"' in conversations
    # both segments' prompts in one overview, each opening the whole conversation at its message
    assert "Make the upload &lt;b&gt;retry&lt;/b&gt;" in conversations and "Also back off on 429" in conversations
    assert re.search(rf'href="{whole}\?at=[0-9a-f-]+#m-[0-9a-f-]+"', conversations)
    assert "An abandoned try" in conversations and "no longer in the PR" in conversations
    assert "Unrelated work" not in html and ELSEWHERE[:7] not in html
    assert 'id="prompt-overview"' not in html  # several overviews on one page: no repeated id
    with scopes_disabled():  # the prompts shown are content: their reads are logged
        logged = set(AccessLog.objects.filter(via="web").values_list("session_id", flat=True))
    assert {reviewed["kept"].pk, reviewed["second"].pk, reviewed["dropped"].pk} <= logged
    assert reviewed["elsewhere"].pk not in logged


def test_the_pr_counts_its_sessions_tokens_and_cost(world, reviewed) -> None:
    client = Client()
    client.force_login(world.viewer)

    html = client.get("/p/acme-api/pr/7").content.decode()

    usage = html[html.index('id="pr-usage"') :]
    assert "estimated cost <strong>$" in usage and "unpriced" not in usage.split("</section>")[0]


def test_a_commit_without_a_record_counts_its_insertions_as_unknown(world, make_session) -> None:
    make_session(world.project, world.member, seed="no-record", commit_hash=KEPT, diff_stat={"insertions": 11})
    pull_request(world.project, number=8, commits=[KEPT, SECOND])
    client = Client()
    client.force_login(world.viewer)

    html = client.get("/p/acme-api/pr/8").content.decode()

    assert row(html, "Unknown") == ["11", "100%"]
    assert "1 commit with sessions but no attribution record" in html
    assert "1 commit without a captured session is not counted" in html


def test_mixed_and_unknown_contributors_count_as_unknown() -> None:
    span = [{"start_line": 1, "end_line": 2}]
    files = [
        {"path": "a.py", "conversations": [{"contributor": {"type": t}, "ranges": span} for t in ("ai", "mixed")]},
        {"path": "b.py", "conversations": [{"contributor": {"type": "unknown"}, "ranges": span}]},
    ]
    summary = attribution_summary([("codex", files)])
    assert (summary.lines.ai, summary.lines.human, summary.lines.unknown) == (2, 0, 4)
    assert summary.model_rows() == [("codex", "unknown model", 2)]
    assert summary.agent_only_files() == []


def test_each_session_and_commit_of_the_pr_links_to_it(world, reviewed, make_session) -> None:
    make_session(world.project, world.member, seed="task-on-kept", commit_hash=KEPT, kind="task", task_id="SL-9")
    client = Client()
    client.force_login(world.viewer)

    for key in ("kept", "dropped"):
        page = client.get(f"/p/acme-api/s/{reviewed[key].pk}").content.decode()
        assert '<a href="/p/acme-api/pr/7">#7</a>' in page
    assert "/pr/7" not in client.get(f"/p/acme-api/s/{reviewed['elsewhere'].pk}").content.decode()
    choices = client.get(f"/p/acme-api/c/{KEPT}").content.decode()  # two sessions: the choice page
    assert '<a href="/p/acme-api/pr/7">pull request #7</a>' in choices


def test_the_session_list_filters_by_pr(world, reviewed, api_as) -> None:
    client = Client()
    client.force_login(world.viewer)

    html = client.get("/p/acme-api/?pr=7").content.decode()
    listed = {s for s in ("Retry the upload", "Back off on 429", "First attempt", "Unrelated work") if s in html}
    assert listed == {"Retry the upload", "Back off on 429", "First attempt"}
    assert "A pull request number is a positive whole number." in client.get("/p/acme-api/?pr=x").content.decode()

    api = api_as(world.viewer)
    found = api.get("/api/v1/projects/acme-api/sessions", {"pr": "7"}).json()["results"]
    assert {s["commit_hash"] for s in found} == {KEPT, SECOND, DROPPED}
    assert api.get("/api/v1/projects/acme-api/sessions", {"pr": "9"}).json()["results"] == []
    assert api.get("/api/v1/projects/acme-api/sessions", {"pr": "-1"}).status_code == 400


def test_the_pr_filter_follows_relinks_and_stays_in_its_project(world, make_session, api_as) -> None:
    rebased = commit_hash("rebased")
    make_session(world.project, world.member, seed="before-rebase", commit_hash=KEPT)
    make_session(world.other_project, world.other_admin, seed="other-tenant", commit_hash=rebased)
    assert (
        api_as(world.member)
        .post("/api/v1/projects/acme-api/commits/relink", {"pairs": [{"old": KEPT, "new": rebased}]}, format="json")
        .status_code
        == 200
    )
    pull_request(world.project, number=7, commits=[rebased])

    found = api_as(world.viewer).get("/api/v1/projects/acme-api/sessions", {"pr": "7"}).json()["results"]
    assert [s["commit_hash"] for s in found] == [KEPT]
    other = api_as(world.other_admin).get("/api/v1/projects/globex-web/sessions", {"pr": "7"}).json()["results"]
    assert other == []


def test_the_pr_page_lists_the_sessions_of_its_commits_and_those_a_force_push_dropped(world, make_session) -> None:
    kept, dropped, elsewhere = commit_hash("pr-kept"), commit_hash("pr-dropped"), commit_hash("not-in-pr")
    make_session(world.project, world.member, seed="pr-1", commit_hash=kept)
    make_session(world.project, world.member, seed="pr-2", commit_hash=dropped)
    make_session(world.project, world.member, seed="pr-3", commit_hash=elsewhere)
    pull_request(world.project, number=7, commits=[kept], dropped=(dropped,))
    client = Client()
    client.force_login(world.viewer)

    page = client.get("/p/acme-api/pr/7")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Retry the upload on 503" in html and "2 sessions" in html
    assert kept[:7] in html and dropped[:7] in html and elsewhere[:7] not in html
    commits = html[html.index("<h2>Commits</h2>") :]
    assert commits.index(kept[:7]) < commits.index("No longer in the pull request") < commits.index(dropped[:7])


def test_an_outsider_and_another_projects_admin_get_404(world) -> None:
    pull_request(world.project, number=7, commits=[commit_hash("pr-kept")])
    for user in (world.outsider, world.other_admin):
        client = Client()
        client.force_login(user)
        assert client.get("/p/acme-api/pr/7").status_code == 404
        assert client.get("/p/globex-web/pr/7").status_code == 404

"""``/p/{project}/pr/{number}``: the sessions behind a pull request's commits, to members only."""

from __future__ import annotations

from django.test import Client

from tests.integrations.records import pull_request
from tests.uploads import commit_hash


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
    assert html.index(kept[:7]) < html.index("No longer in the pull request") < html.index(dropped[:7])


def test_an_outsider_and_another_projects_admin_get_404(world) -> None:
    pull_request(world.project, number=7, commits=[commit_hash("pr-kept")])
    for user in (world.outsider, world.other_admin):
        client = Client()
        client.force_login(user)
        assert client.get("/p/acme-api/pr/7").status_code == 404
        assert client.get("/p/globex-web/pr/7").status_code == 404

"""The PR comment: one per pull request, never two under racing deliveries, counts and links only unless
the project opted in to titles and prompts, inert markdown whatever a session's title says, GitLab's
notes in the same design, and every request valid against the forge's published description."""

from __future__ import annotations

import threading
import time

import jsonschema
import pytest
from django.db import connection
from django.test import Client

from integrations.models import ForgeCommentSettings, ForgeInstallation, PullRequest, RepositoryBinding
from integrations.tasks import pull_request_commits_sync
from projects.scoping import unscoped
from sessions_app.models import Session
from tests.integrations import payloads
from tests.integrations.fakeforge import Sent
from tests.integrations.forge_schemas import check, check_all
from tests.integrations.payloads import encode, gitlab_headers
from tests.integrations.story import FULL_NAME, INSTALLATION, REPO, bind, deliver
from tests.racing import HANG_GUARD, in_thread, raise_any


def test_by_default_the_comment_has_counts_and_links_but_no_title_or_prompt(story) -> None:
    one = story.commit("one", story.main)
    with unscoped():
        Session.objects.update(title="Rotate the payroll password", digest={"prompts": ["the key is hunter2"]})
    story.push(3, [one], action="opened")
    [body] = story.forge.comment_bodies(3)
    assert "payroll" not in body and "hunter2" not in body
    assert "[conversation 1](http://testserver/p/acme-api/s/" in body
    assert "67% AI · 33% human · 0% unknown of 3 added lines" in body
    assert "POST /repos/{owner}/{repo}/issues/{issue_number}/comments" in check_all("github", story.forge.sent)


def test_a_project_that_opted_in_shows_titles_and_prompt_excerpts_as_inert_text(story, world) -> None:
    with unscoped():
        ForgeCommentSettings.objects.create(project=world.project, show_titles_and_prompts=True)
    one = story.commit("one", story.main)
    with unscoped():
        Session.objects.update(
            title="Fix [it](https://evil.example) @acme/all <img src=x>\n# Big | `y`",
            digest={"prompts": ["Write one\n\nplease"]},
        )
    story.push(3, [one], action="opened")
    [body] = story.forge.comment_bodies(3)
    # In a code span: no link, no mention, no HTML, no heading; the pipe cannot end the table's cell.
    title = r"`` Fix [it](https://evil.example) @acme/all <img src=x> # Big \| `y` ``"
    assert f"| 1 | [{title} — “` Write one please `”](http://testserver/p/acme-api/s/" in body


def test_an_app_without_the_checks_permission_still_gets_its_comment(story) -> None:
    story.forge.checks_forbidden = True
    story.push(3, [story.commit("one", story.main)], action="opened")
    assert len(story.forge.comment_bodies(3)) == 1 and story.forge.check_runs == []
    with unscoped():
        assert PullRequest.objects.get().check_run_id == ""


def test_nothing_is_posted_for_a_repository_bound_to_no_project(world, forge) -> None:
    ForgeInstallation.objects.create(forge="github", external_id=str(INSTALLATION), account="acme")
    payload = payloads.pull_request("opened", installation=INSTALLATION, repo_id=REPO, full_name=FULL_NAME)
    assert deliver("pull_request", payload).status_code == 200
    with unscoped():
        assert not PullRequest.objects.exists()
    assert forge.requests == [] and forge.comments == {}


def test_a_gitlab_merge_request_gets_one_note_edited_in_place(world, forge) -> None:
    group = ForgeInstallation.objects.create(forge="gitlab", external_id="acme", account="acme")
    RepositoryBinding.objects.create(
        installation=group, repository_id="15", full_name="acme/api", project=world.project
    )
    path = "/api/v4/projects/15/merge_requests/1/commits"
    for n, (last, oldrev) in enumerate(((["2" * 40, "1" * 40], None), (["3" * 40, "2" * 40, "1" * 40], "2" * 40))):
        forge.commits[path] = last
        action = "open" if n == 0 else "update"
        body = encode(
            payloads.merge_request(action, project_id=15, path="acme/api", last_commit=last[0], oldrev=oldrev)
        )
        response = Client().post(
            "/integrations/gitlab/webhook",
            body,
            content_type="application/json",
            **gitlab_headers("Merge Request Hook"),
        )
        assert response.status_code == 202
        with unscoped():
            pr = PullRequest.objects.get()
        pull_request_commits_sync.apply(args=[str(pr.pk)]).get()
    [note] = forge.comments.values()
    assert note["edits"] == 1 and "in 3 commits" in note["body"] and "/p/acme-api/pr/1" in note["body"]
    assert "PUT /api/v4/projects/{id}/merge_requests/{merge_request_iid}/notes/{note_id}" in check_all(
        "gitlab", forge.sent
    )


def _waiting_for_a_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted)")
        return bool(cursor.fetchone()[0])


@pytest.mark.django_db(transaction=True)  # two threads, two connections, real commits
def test_two_racing_deliveries_write_one_comment(world, forge) -> None:
    bind(world.project)
    forge.commits[f"/repositories/{REPO}/pulls/2/commits"] = ["1" * 40]
    opened = payloads.pull_request("opened", installation=INSTALLATION, repo_id=REPO, full_name=FULL_NAME)
    assert deliver("pull_request", opened).status_code == 202
    with unscoped():
        pr = PullRequest.objects.get()
    forge.hold_comment_post = threading.Event()
    results: dict[str, object] = {}
    first = in_thread(lambda: pull_request_commits_sync.apply(args=[str(pr.pk)], throw=True), results, "first")
    assert forge.comment_post_reached.wait(HANG_GUARD)  # the first is creating the comment
    second = in_thread(lambda: pull_request_commits_sync.apply(args=[str(pr.pk)], throw=True), results, "second")
    deadline = time.monotonic() + HANG_GUARD
    while second.is_alive() and not _waiting_for_a_lock():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    forge.hold_comment_post.set()
    first.join(HANG_GUARD)
    second.join(HANG_GUARD)
    raise_any(results)
    [comment] = forge.comments.values()
    assert comment["edits"] == 1


@pytest.mark.parametrize(
    ("forge", "sent"),
    [
        ("github", Sent("POST", "/repositories/1/issues/2/comments", {}, {"text": "no body field"})),
        ("github", Sent("PATCH", "/repositories/1/issues/comments/x", {}, {"body": "an id that is no integer"})),
        ("github", Sent("GET", "/repositories/1/pulls/2/commits", {"since": ["yesterday"]}, None)),
        ("github", Sent("DELETE", "/repositories/1/issues/comments/3", {}, None)),
        ("gitlab", Sent("POST", "/api/v4/projects/1/merge_requests/2/notes", {}, {"body": ""})),
        ("gitlab", Sent("GET", "/api/v4/projects/1/merge_requests/2/notes", {"per_page": ["500"]}, None)),
    ],
)
def test_the_schema_check_refuses_a_request_the_forge_does_not_describe(forge: str, sent: Sent) -> None:
    with pytest.raises((AssertionError, jsonschema.ValidationError)):
        check(forge, sent)

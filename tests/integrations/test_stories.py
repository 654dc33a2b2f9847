"""Whole pull requests against the fake forge, from the first webhook to the merge: the PR's commits, one
comment edited in place at each push, and after a squash or a rebase, ``blame`` of the default branch
through the API finding the conversation of every AI line the branch had — with no client action."""

from __future__ import annotations

from django.test import Client

from integrations.comments import MARKER
from integrations.models import ForgeInstallation, PullRequest, RepositoryBinding
from projects.scoping import unscoped
from sessions_app.models import CommitLink
from tests.integrations import payloads
from tests.integrations.forge_schemas import check_all
from tests.integrations.story import REPO, Story, deliver


def merge_method(number: int) -> str:
    with unscoped():
        return PullRequest.objects.get(number=number).merge_method


def test_opened_pushed_force_pushed_reviewed_and_squash_merged(story) -> None:
    forge = story.forge
    one = story.commit("one", story.main)
    two = story.commit("two", one, conversation_id="conv-b")
    story.push(7, [one, two], action="opened")
    [comment] = forge.comments.values()
    assert comment["edits"] == 0 and "in 2 commits" in comment["body"] and "Conversations:** 2" in comment["body"]
    assert "/p/acme-api/pr/7" in comment["body"]

    three = story.commit("three", two)
    story.push(7, [one, two, three])
    assert [c["edits"] for c in forge.comments.values()] == [1]
    assert "Since the last push" in comment["body"] and "commits 2 → 3" in comment["body"]

    # Forced: the branch rebased onto a newer main (same patches, new hashes), "three" dropped, "four" added.
    newer_main = story.commit("hotfix", story.main, conversation_id=None)
    one_b = story.rewritten(one, newer_main)
    two_b = story.rewritten(two, one_b)
    four = story.commit("four", two_b)
    story.push(7, [one_b, two_b, four])
    assert story.commits(7) == [(one_b, True), (two_b, True), (four, True), (one, False), (two, False), (three, False)]
    assert [c["edits"] for c in forge.comments.values()] == [2]
    assert "(3 no longer in the PR)" in comment["body"]

    review = {"action": "submitted", "review": {"id": 1, "state": "approved"}, "pull_request": {"number": 7}}
    assert deliver("pull_request_review", review).status_code == 200  # received, changes nothing

    squash = story.squashed([one_b, two_b, four], newer_main)
    story.merged(7, squash)
    story.reviewed(7)
    assert merge_method(7) == "squash"
    with unscoped():
        merged_at = PullRequest.objects.get(number=7).merged_at
    assert merged_at is not None
    closed = {"head_sha": four, "merged": True, "state": "closed", "merge_commit_sha": squash}
    assert story.event("edited", 7, **closed).status_code == 200  # a title edited after the merge: no sync
    with unscoped():
        assert PullRequest.objects.get(number=7).merged_at == merged_at  # insights date it by the merge
    assert len(forge.comments) == 1 and [c["edits"] for c in forge.comments.values()] == [3]
    branch = {**story.blame(one), **story.blame(two), **story.blame(four)}  # as the sessions recorded them
    assert len(branch) == 3 * 2
    assert story.blame(squash) == branch  # not "three"'s: a force push dropped it
    assert check_all("github", forge.sent) == {  # every request valid, of these operations
        "POST /app/installations/{installation_id}/access_tokens",
        "GET /repos/{owner}/{repo}/pulls/{pull_number}/commits",
        "GET /repos/{owner}/{repo}/commits/{ref}",
        "GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
        "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
        "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}",
        "POST /repos/{owner}/{repo}/check-runs",
        "PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}",
    }
    # A check run per head, the same summary as the comment, edited when the merge changed the summary.
    assert [(run["head_sha"], run["edits"]) for run in forge.check_runs] == [(two, 0), (three, 0), (four, 1)]
    assert forge.check_runs[-1]["output"]["summary"] == comment["body"].removeprefix(MARKER).lstrip()
    assert {run["conclusion"] for run in forge.check_runs} == {"neutral"}


def test_a_rebase_merge_links_each_new_commit_by_patch_id(story) -> None:
    one = story.commit("one", story.main)
    two = story.commit("two", one)
    three = story.commit("three", two, conversation_id="conv-b")
    story.push(8, [one, two, three], action="opened")
    new_main = story.commit("other-work", story.main, conversation_id=None)
    one_r = story.rewritten(one, new_main)
    two_r = story.rewritten(two, one_r)
    three_r = story.rewritten(three, two_r)
    story.merged(8, three_r)
    story.reviewed(8)
    assert merge_method(8) == "rebase"
    with unscoped():
        links = set(CommitLink.objects.values_list("old_hash", "new_hash"))
    assert links == {(one, one_r), (two, two_r), (three, three_r)}
    for old, new in ((one, one_r), (two, two_r), (three, three_r)):
        assert story.blame(new) == story.blame(old) != {}
    assert [c["edits"] for c in story.forge.comments.values()] == [1]
    check_all("github", story.forge.sent)


def test_a_merge_commit_leaves_the_commits_as_they_are(story) -> None:
    one = story.commit("one", story.main)
    two = story.commit("two", one)
    story.push(9, [one, two], action="opened")
    merge = story.merge_commit(story.main, two)
    story.merged(9, merge)
    story.reviewed(9)
    assert merge_method(9) == "merge"
    with unscoped():
        assert not CommitLink.objects.exists()  # blame on the default branch names the PR's own commits
    assert set(story.blame(one)) | set(story.blame(two)) == set(story.ai_lines)
    assert [c["edits"] for c in story.forge.comments.values()] == [1]
    check_all("github", story.forge.sent)


def test_a_pull_request_of_300_commits_has_them_all_through_the_compare_api(story) -> None:
    story.forge.page_size = 100
    shas, parent = [], story.main
    for n in range(300):
        # Sessions for a few of them: uploading 300 would only slow the test down.
        parent = story.commit(f"c{n}", parent, conversation_id="conv-a" if n in (0, 149, 299) else None)
        shas.append(parent)
    story.push(10, shas, action="opened")
    assert [sha for sha, still in story.commits(10)] == shas
    assert ("GET", f"/repositories/{REPO}/compare/{story.main}...{shas[-1]}") in story.forge.requests
    [comment] = story.forge.comments.values()
    assert "in 300 commits" in comment["body"]

    squash = story.squashed(shas, story.main)
    story.merged(10, squash)
    story.reviewed(10)
    assert story.blame(squash) == story.ai_lines
    assert "GET /repos/{owner}/{repo}/compare/{basehead}" in check_all("github", story.forge.sent)


def test_a_push_to_the_default_branch_syncs_a_merged_pr_not_relinked_yet(story) -> None:
    one = story.commit("one", story.main)
    two = story.commit("two", one)
    story.push(11, [one, two], action="opened")
    squash = story.squashed([one, two], story.main)
    closed = {"head_sha": two, "merged": True, "state": "closed", "merge_commit_sha": squash}
    assert story.event("closed", 11, **closed).status_code == 202  # its sync is lost: the broker was down

    def push(ref: str) -> int:
        payload = {
            "ref": ref,
            "before": story.main,
            "after": squash,
            "forced": False,
            "repository": payloads.github_repository(REPO, "acme/api"),
            "installation": {"id": 1001},
        }
        return deliver("push", payload).status_code

    assert push("refs/heads/some-feature") == 200  # not the default branch: nothing to sync
    assert push("refs/heads/main") == 202
    story.sync(11)  # what the push queued
    assert merge_method(11) == "squash" and story.blame(squash) == story.ai_lines
    assert push("refs/heads/main") == 200  # relinked: nothing left to sync


def test_a_gitlab_squash_merge_is_relinked_through_its_squash_commit(world, forge, api_as) -> None:
    group = ForgeInstallation.objects.create(forge="gitlab", external_id="acme", account="acme")
    RepositoryBinding.objects.create(
        installation=group, repository_id="15", full_name="acme/api", project=world.project
    )
    story = Story(forge=forge, client=api_as(world.member), slug=world.project.slug)
    one = story.commit("one", story.main)
    two = story.commit("two", one, conversation_id="conv-b")
    forge.commits["/api/v4/projects/15/merge_requests/1/commits"] = [two, one]  # GitLab: newest first

    def hook(action: str, **attributes: str) -> int:
        payload = payloads.merge_request(action, project_id=15, path="acme/api", last_commit=two)
        payload["object_attributes"].update(attributes)
        body = payloads.encode(payload)
        headers = payloads.gitlab_headers("Merge Request Hook")
        return (
            Client().post("/integrations/gitlab/webhook", body, content_type="application/json", **headers).status_code
        )

    assert hook("open") == 202
    story.sync(1)
    squash = story.squashed([one, two], story.main)
    assert hook("merge", squash_commit_sha=squash) == 202  # fast-forward squash: no merge commit
    story.sync(1)
    assert merge_method(1) == "squash" and story.blame(squash) == story.ai_lines
    [note] = forge.comments.values()
    assert note["edits"] == 1
    assert "GET /api/v4/projects/{id}/repository/commits/{sha}/diff" in check_all("gitlab", forge.sent)

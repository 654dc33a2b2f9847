"""A wrong signature, a replayed delivery, an unbound repository and a repository bound to another tenant:
each leaves everything as it was — the pull request, its commits, the commit links, the comment, and the
forge not even asked — even when the delivery would merge the PR or push to the default branch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from integrations.models import ForgeInstallation, PullRequest, PullRequestCommit, RepositoryBinding
from projects.models import Project
from projects.scoping import unscoped
from sessions_app.models import CommitLink
from tests.integrations import payloads
from tests.integrations.payloads import encode, github_headers
from tests.integrations.story import FULL_NAME, INSTALLATION, REPO, Story

OTHER_INSTALLATION, OTHER_REPO = 2002, 186853003


def state(story: Story) -> tuple[Any, ...]:
    with unscoped():
        prs = list(PullRequest.objects.values_list("number", "state", "head_sha", "merged", "merge_method"))
        commits = list(PullRequestCommit.objects.values_list("sha", "still_in_pr"))
        links = list(CommitLink.objects.values_list("old_hash", "new_hash"))
    comments = [(c["body"], c["edits"]) for c in story.forge.comments.values()]
    return prs, commits, links, comments


def post(event: str, payload: dict[str, Any], **header_options: Any) -> Any:
    body = encode(payload)
    headers = github_headers(event, body, **header_options)
    return Client().post("/integrations/github/webhook", body, content_type="application/json", **headers)


def merged(story: Story, squash: str, *, installation: int = INSTALLATION, repo_id: int = REPO) -> dict[str, Any]:
    payload = payloads.pull_request(
        "closed",
        installation=installation,
        repo_id=repo_id,
        full_name=FULL_NAME,
        number=7,
        head_sha=story.head,
        merged=True,
        state="closed",
        merge_commit_sha=squash,
    )
    payload["pull_request"]["base"]["sha"] = story.main
    return payload


def default_branch_push(squash: str, *, installation: int = INSTALLATION, repo_id: int = REPO) -> dict[str, Any]:
    return {
        "ref": "refs/heads/main",
        "before": "0" * 40,
        "after": squash,
        "forced": False,
        "repository": payloads.github_repository(repo_id, FULL_NAME),
        "installation": {"id": installation},
    }


def wrong_signature(story: Story, squash: str, other_project: Project) -> list[Any]:
    return [
        post("pull_request", merged(story, squash), secret="guessed"),
        post("push", default_branch_push(squash), secret="guessed"),
    ]


def replayed(story: Story, squash: str, other_project: Project) -> list[Any]:
    # The PR was opened by delivery "first"; the same id now carries a merge.
    return [post("pull_request", merged(story, squash), delivery="first")]


def unbound(story: Story, squash: str, other_project: Project) -> list[Any]:
    """acme's installation, a repository of acme's that nobody bound."""
    return [
        post("pull_request", merged(story, squash, repo_id=OTHER_REPO)),
        post("push", default_branch_push(squash, repo_id=OTHER_REPO)),
    ]


def another_tenants(story: Story, squash: str, other_project: Project) -> list[Any]:
    """globex's installation, bound to globex's project, names acme's repository id."""
    evil = ForgeInstallation.objects.create(forge="github", external_id=str(OTHER_INSTALLATION), account="globex")
    RepositoryBinding.objects.create(
        installation=evil, repository_id=str(OTHER_REPO), full_name="globex/web", project=other_project
    )
    return [
        post("pull_request", merged(story, squash, installation=OTHER_INSTALLATION)),
        post("push", default_branch_push(squash, installation=OTHER_INSTALLATION)),
    ]


@pytest.mark.parametrize("attack", [wrong_signature, replayed, unbound, another_tenants])
def test_the_delivery_changes_nothing(story, world, attack: Callable[[Story, str, Project], list[Any]]) -> None:
    one = story.commit("one", story.main)
    story.forge.commits[story.pr_path(7)] = [one]
    story.pr_commits, story.head = [one], one
    opened = payloads.pull_request(
        "opened", installation=INSTALLATION, repo_id=REPO, full_name=FULL_NAME, number=7, head_sha=one
    )
    assert post("pull_request", opened, delivery="first").status_code == 202
    story.sync(7)
    squash = story.squashed([one], story.main)
    before, asked = state(story), len(story.forge.requests)
    assert before[3]  # the comment exists

    responses = attack(story, squash, world.other_project)

    assert all(r.status_code in (200, 401) for r in responses)  # 202 would mean a sync was queued
    assert state(story) == before
    assert len(story.forge.requests) == asked
    assert story.blame(squash) == {}

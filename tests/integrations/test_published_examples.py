"""GitHub's published webhook examples parse into the typed events, and a bound repository's
delivery of them records the pull request they describe."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from integrations.forges.base import InstallationEvent, PullRequestEvent, PushEvent
from integrations.forges.github import GitHub
from integrations.models import ForgeInstallation, PullRequest, RepositoryBinding
from projects.scoping import unscoped
from tests.integrations.payloads import github_headers

EXAMPLES = Path(__file__).parent.parent / "fixtures" / "github_webhooks"


def example(name: str) -> tuple[bytes, Any]:
    body = (EXAMPLES / f"{name}.json").read_bytes()
    return body, json.loads(body)


@pytest.mark.parametrize("action", ["synchronize", "reopened", "closed"])
def test_a_published_pull_request_example_parses_to_its_fields(action: str) -> None:
    body, payload = example(f"pull_request.{action}")
    event = GitHub().parse({"X-GitHub-Event": "pull_request"}, body)
    pr = payload["pull_request"]
    assert isinstance(event, PullRequestEvent)
    assert (event.action, event.number, event.title, event.head_sha, event.installation_id) == (
        action,
        pr["number"],
        pr["title"],
        pr["head"]["sha"],
        str(payload["installation"]["id"]),
    )
    assert event.repository.forge_id == str(payload["repository"]["id"])


def test_published_installation_and_push_examples_parse() -> None:
    created = GitHub().parse({"X-GitHub-Event": "installation"}, example("installation.created")[0])
    assert isinstance(created, InstallationEvent) and created.action == "created" and created.added
    removed = GitHub().parse(
        {"X-GitHub-Event": "installation_repositories"}, example("installation_repositories.removed")[0]
    )
    assert isinstance(removed, InstallationEvent) and removed.removed
    _, payload = example("push")
    payload["installation"] = {"id": 1}  # the published push is a repository webhook's
    push = GitHub().parse({"X-GitHub-Event": "push"}, json.dumps(payload).encode())
    assert isinstance(push, PushEvent) and push.after == payload["after"]


def test_a_published_synchronize_for_a_bound_repository_records_its_pull_request(world, forge) -> None:
    body, payload = example("pull_request.synchronize")
    installation = ForgeInstallation.objects.create(
        forge="github", external_id=str(payload["installation"]["id"]), account="Codertocat"
    )
    RepositoryBinding.objects.create(
        installation=installation,
        repository_id=str(payload["repository"]["id"]),
        full_name=payload["repository"]["full_name"],
        project=world.project,
    )
    headers = github_headers("pull_request", body)
    response = Client().post("/integrations/github/webhook", body, content_type="application/json", **headers)
    assert response.status_code == 202
    with unscoped():
        pr = PullRequest.objects.get()
    assert (pr.number, pr.title, pr.project) == (payload["number"], payload["pull_request"]["title"], world.project)

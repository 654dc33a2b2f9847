"""The forge webhooks: only verified, first deliveries for repositories staff bound change anything,
and a pull request's commits come from the forge's API (a fake one on loopback)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from integrations.models import ForgeInstallation, PullRequest, PullRequestCommit, RepositoryBinding, WebhookDelivery
from integrations.tasks import deliveries_prune, pull_request_commits_sync
from projects.scoping import unscoped
from tests.integrations import payloads
from tests.integrations.payloads import encode, github_headers, gitlab_headers

ACME_INSTALLATION, EVIL_INSTALLATION = 1001, 2002
REPO, EVIL_REPO = 186853002, 186853003


@pytest.fixture
def bound(world, forge) -> RepositoryBinding:
    acme = ForgeInstallation.objects.create(forge="github", external_id=str(ACME_INSTALLATION), account="acme")
    return RepositoryBinding.objects.create(
        installation=acme, repository_id=str(REPO), full_name="acme/api", project=world.project
    )


def github(event: str, payload: dict[str, Any], **header_options: Any) -> Any:
    body = encode(payload)
    return Client().post(
        "/integrations/github/webhook",
        body,
        content_type="application/json",
        **github_headers(event, body, **header_options),
    )


def opened(action: str = "opened", **options: Any) -> dict[str, Any]:
    return payloads.pull_request(action, installation=ACME_INSTALLATION, repo_id=REPO, full_name="acme/api", **options)


def pull_requests() -> list[PullRequest]:
    with unscoped():
        return list(PullRequest.objects.all())


def commits(pr: PullRequest) -> list[tuple[str, bool]]:
    with unscoped():
        return [(c.sha, c.still_in_pr) for c in PullRequestCommit.objects.filter(pull_request=pr)]


def test_a_wrong_signature_changes_nothing(bound) -> None:
    body = encode(opened())
    headers = github_headers("pull_request", body, secret="not the App's secret")
    response = Client().post("/integrations/github/webhook", body, content_type="application/json", **headers)
    assert response.status_code == 401
    assert pull_requests() == [] and not WebhookDelivery.objects.exists()


def test_a_body_changed_after_signing_changes_nothing(bound) -> None:
    headers = github_headers("pull_request", encode(opened()))
    tampered = encode(opened(title="Something else"))
    response = Client().post("/integrations/github/webhook", tampered, content_type="application/json", **headers)
    assert response.status_code == 401
    assert pull_requests() == []


def test_a_replayed_delivery_changes_nothing(bound) -> None:
    assert github("pull_request", opened(), delivery="72d3162e-cc78-11e3-81ab-4c9367dc0958").status_code == 202
    replay = github("pull_request", opened("edited", title="Replayed"), delivery="72d3162e-cc78-11e3-81ab-4c9367dc0958")
    assert replay.status_code == 200 and replay.json() == {"detail": "already received"}
    [pr] = pull_requests()
    assert pr.title == "Update the README with new information."


def test_an_unbound_repository_changes_nothing(world, forge) -> None:
    ForgeInstallation.objects.create(forge="github", external_id=str(ACME_INSTALLATION), account="acme")
    assert github("pull_request", opened()).status_code == 200
    assert pull_requests() == []
    assert forge.requests == []  # not even the forge's API is asked


def test_a_repository_bound_to_another_tenant_is_out_of_reach_of_an_installation(bound, world) -> None:
    """Another installation (another customer's org) names acme's repository id: it finds nothing,
    though it has a binding of its own."""
    evil = ForgeInstallation.objects.create(forge="github", external_id=str(EVIL_INSTALLATION), account="globex")
    RepositoryBinding.objects.create(
        installation=evil, repository_id=str(EVIL_REPO), full_name="globex/web", project=world.other_project
    )
    forged = payloads.pull_request("opened", installation=EVIL_INSTALLATION, repo_id=REPO, full_name="acme/api")
    assert github("pull_request", forged).status_code == 200
    assert pull_requests() == []


def test_opened_then_force_pushed_keeps_the_dropped_commits_marked(bound, forge) -> None:
    path = f"/repositories/{REPO}/pulls/2/commits"
    forge.commits[path] = ["1" * 40, "2" * 40, "3" * 40]
    forge.rate_limited_once.add(path)  # the first page is refused once with Retry-After

    assert github("pull_request", opened(head_sha="3" * 40)).status_code == 202
    [pr] = pull_requests()
    pull_request_commits_sync.apply(args=[str(pr.pk)])
    assert commits(pr) == [("1" * 40, True), ("2" * 40, True), ("3" * 40, True)]
    assert ("POST", "/app/installations/1001/access_tokens") in forge.requests

    # A force push: 2 and 3 were rewritten into 4 and 5.
    forge.commits[path] = ["1" * 40, "4" * 40, "5" * 40]
    assert github("pull_request", opened("synchronize", head_sha="5" * 40)).status_code == 202
    pull_request_commits_sync.apply(args=[str(pr.pk)])
    assert commits(pr) == [("1" * 40, True), ("4" * 40, True), ("5" * 40, True), ("2" * 40, False), ("3" * 40, False)]
    [pr] = pull_requests()
    assert (pr.head_sha, pr.commits_synced_sha, pr.state) == ("5" * 40, "5" * 40, "open")


def test_a_merged_pull_request_records_its_merge_commit(bound, forge) -> None:
    github("pull_request", opened())
    closed = opened("closed", merged=True, state="closed")
    assert github("pull_request", closed).status_code in (200, 202)
    [pr] = pull_requests()
    assert (pr.state, pr.merged, pr.merge_commit_sha) == ("merged", True, "c4295bd74fb0f4fbd0f2b9b2d4e3a0e4b0b9b2d4")


def test_installation_events_create_it_and_removing_a_repository_unbinds_it(bound) -> None:
    created = payloads.installation("created", installation=3003, account="initech", repositories=[(5, "initech/x")])
    assert github("installation", created).status_code == 200
    assert ForgeInstallation.objects.get(external_id="3003").account == "initech"
    removed = {
        "action": "removed",
        "installation": {"id": ACME_INSTALLATION, "account": {"login": "acme"}},
        "repositories_added": [],
        "repositories_removed": [{"id": REPO, "full_name": "acme/api"}],
    }
    assert github("installation_repositories", removed).status_code == 200
    assert not RepositoryBinding.objects.exists()
    assert github("pull_request", opened()).status_code == 200
    assert pull_requests() == []


def test_gitlab_wrong_token_and_replay_change_nothing_and_a_merge_request_gets_its_commits(world, forge) -> None:
    group = ForgeInstallation.objects.create(forge="gitlab", external_id="acme", account="acme")
    RepositoryBinding.objects.create(
        installation=group, repository_id="15", full_name="acme/api", project=world.project
    )
    forge.commits["/api/v4/projects/15/merge_requests/1/commits"] = ["3" * 40, "2" * 40, "1" * 40]  # newest first
    body = encode(payloads.merge_request("open", project_id=15, path="acme/api", last_commit="3" * 40))

    def post(**headers: Any) -> Any:
        return Client().post("/integrations/gitlab/webhook", body, content_type="application/json", **headers)

    assert post(**gitlab_headers("Merge Request Hook", token="guess")).status_code == 401
    assert pull_requests() == []
    assert post(**gitlab_headers("Merge Request Hook", delivery="d1")).status_code == 202
    assert post(**gitlab_headers("Merge Request Hook", delivery="d1")).json() == {"detail": "already received"}
    [pr] = pull_requests()
    pull_request_commits_sync.apply(args=[str(pr.pk)])
    assert commits(pr) == [("1" * 40, True), ("2" * 40, True), ("3" * 40, True)]


def test_delivery_ids_past_every_redelivery_window_are_pruned_and_recent_ones_still_refuse_replays(bound) -> None:
    github("pull_request", opened(), delivery="recent")
    WebhookDelivery.objects.create(forge="github", delivery_id="old", event="PullRequestEvent")
    WebhookDelivery.objects.filter(delivery_id="old").update(received_at=timezone.now() - timedelta(days=31))
    assert deliveries_prune.apply().get() == 1
    assert list(WebhookDelivery.objects.values_list("delivery_id", flat=True)) == ["recent"]
    assert github("pull_request", opened("edited", title="Replayed"), delivery="recent").status_code == 200
    [pr] = pull_requests()
    assert pr.title == "Update the README with new information."

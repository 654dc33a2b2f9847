"""A pull request's whole story against the fake forge: commits with real diffs (so patch ids match
after a rebase or a squash), sessions uploaded through the API with their attribution records, the
webhooks delivered signed, the worker's task run, and blame asked of the API as the client asks it."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from django.test import Client
from rest_framework.test import APIClient

from integrations.models import ForgeInstallation, PullRequest, PullRequestCommit, RepositoryBinding
from integrations.tasks import pull_request_commits_sync
from projects.models import Project
from projects.scoping import unscoped
from sessionledger.core import attribution, attribution_record
from tests.conftest import conversation
from tests.integrations import payloads
from tests.integrations.fakeforge import FakeCommit, FakeForge
from tests.integrations.payloads import encode, github_headers
from tests.uploads import metadata_for, upload

INSTALLATION, REPO, FULL_NAME = 1001, 186853002, "acme/api"
AI_LINES = 2  # of each commit's three lines, the first two are the agent's


def sha_of(*parts: str) -> str:
    return hashlib.sha1("\0".join(parts).encode()).hexdigest()


def lines_of(tag: str) -> list[str]:
    return [f"value_{tag}_{n} = compute('{tag}', {n})" for n in range(3)]


def patch_of(tags: list[str]) -> str:
    added = [line for tag in tags for line in lines_of(tag)]
    return f"@@ -0,0 +1,{len(added)} @@\n" + "\n".join(f"+{line}" for line in added)


@dataclass
class Story:
    forge: FakeForge
    client: APIClient  # a member's
    slug: str
    main: str = ""
    pr_commits: list[str] = field(default_factory=list)
    ai_lines: dict[str, str] = field(default_factory=dict)  # line hash → the session that wrote it
    conversations: dict[str, str] = field(default_factory=dict)  # commit → its agent session
    head: str = ""

    def __post_init__(self) -> None:
        self.main = self.forge.add(FakeCommit(sha_of("main"), (), (("README.md", "@@ -0,0 +1 @@\n+hello"),))).sha

    # --- the repository ---------------------------------------------------------------------------

    def commit(self, tag: str, parent: str, *, conversation_id: str | None = "conv-a") -> str:
        """A commit adding ``tag``'s three lines to ``{tag}.py``; with a conversation, a session of
        it uploaded through the API with its attribution record (two AI lines, one human)."""
        sha = self.forge.add(FakeCommit(sha_of(tag, parent), (parent,), ((f"src/{tag}.py", patch_of([tag])),))).sha
        if conversation_id:
            self.session(tag, sha, conversation_id)
        return sha

    def rewritten(self, sha: str, parent: str) -> str:
        """The same change on another parent (a rebase): a new hash, the same patch id (the server
        relinks it to the old one, so it brings the old one's conversation)."""
        old = self.forge.repository[sha]
        new = self.forge.add(FakeCommit(sha_of("rebased", sha, parent), (parent,), old.files)).sha
        if sha in self.conversations:
            self.conversations[new] = self.conversations[sha]
        return new

    def squashed(self, shas: list[str], parent: str) -> str:
        files = tuple(file for sha in shas for file in self.forge.repository[sha].files)
        return self.forge.add(FakeCommit(sha_of("squash", *shas), (parent,), files)).sha

    def merge_commit(self, parent: str, head: str) -> str:
        return self.forge.add(FakeCommit(sha_of("merge", parent, head), (parent, head), ())).sha

    def session(self, tag: str, sha: str, conversation_id: str) -> None:
        path = f"src/{tag}.py"
        added = {path: [attribution.Line.of(n + 1, text, path) for n, text in enumerate(lines_of(tag))]}
        step = attribution.Step(sha_of("step", tag)[:32], "Write", f"/r/{path}", [], 0, 0, "claude-opus-4-6")
        step.keys = frozenset(line.hash for line in added[path][:AI_LINES])
        record = attribution_record.build_record(
            revision=sha,
            added=added,
            owners=attribution.attribute(added, [step]),
            line_counts={path: 3},
            agent="claude-code",
            base_url="http://testserver",
            project=self.slug,
        )
        raw = conversation(f"Write {tag}")
        metadata = metadata_for(raw, commit_hash=sha, files_touched=[path], agent_session_id=conversation_id)
        response = upload(self.client, self.slug, raw, metadata)
        assert response.status_code == 202, response.content
        session_id = response.json()["id"]
        self.conversations[sha] = conversation_id
        url = f"/api/v1/projects/{self.slug}/sessions/{session_id}/attribution"
        posted = self.client.post(url, json.dumps(record), content_type="application/json")
        assert posted.status_code == 201, posted.content
        for line in added[path][:AI_LINES]:
            self.ai_lines[line.hash] = session_id

    # --- the forge's side --------------------------------------------------------------------------

    def pr_path(self, number: int) -> str:
        return f"/repositories/{REPO}/pulls/{number}/commits"

    def event(self, action: str, number: int, **options: Any) -> Any:
        payload = payloads.pull_request(
            action, installation=INSTALLATION, repo_id=REPO, full_name=FULL_NAME, number=number, **options
        )
        payload["pull_request"]["base"]["sha"] = self.main
        return deliver("pull_request", payload)

    def push(self, number: int, commits: list[str], *, action: str = "synchronize") -> None:
        """The branch now holds ``commits``: the webhook, then the worker's sync."""
        self.pr_commits, self.head = commits, commits[-1]
        self.forge.commits[self.pr_path(number)] = commits
        assert self.event(action, number, head_sha=commits[-1]).status_code == 202
        self.sync(number)

    def merged(self, number: int, merge_commit_sha: str) -> None:
        assert merge_commit_sha in self.forge.repository
        closed = {"head_sha": self.head, "merged": True, "state": "closed", "merge_commit_sha": merge_commit_sha}
        assert self.event("closed", number, **closed).status_code == 202
        self.sync(number)

    def sync(self, number: int) -> None:
        with unscoped():
            pr = PullRequest.objects.get(number=number)
        pull_request_commits_sync.apply(args=[str(pr.pk)]).get()

    # --- what people see ---------------------------------------------------------------------------

    def reviewed(self, number: int) -> None:
        """The PR as a reviewer reads it (the API, built by the PR page's selector): exactly the
        conversations of the commits it held, and an AI share equal to the sum of the records of the
        commits it still holds (each commit with a session: two AI lines of three)."""
        answer = self.client.get(f"/api/v1/projects/{self.slug}/pulls/{number}").json()
        held = [sha for sha, still in self.commits(number) if still]
        expected = {self.conversations[sha] for sha, _ in self.commits(number) if sha in self.conversations}
        assert {c["agent_session_id"] for c in answer["conversations"]} == expected
        recorded = [sha for sha in held if sha in self.conversations]
        share = answer["ai_share"]
        assert (share["added_lines"], share["ai_lines"]) == (3 * len(recorded), AI_LINES * len(recorded))

    def commits(self, number: int) -> list[tuple[str, bool]]:
        with unscoped():
            rows = PullRequestCommit.objects.filter(pull_request__number=number)
            return [(c.sha, c.still_in_pr) for c in rows]

    def blame(self, sha: str) -> dict[str, str]:
        """line hash → session, for each AI line the commit's records (relinks followed) attribute,
        from ``GET …/commits/{sha}/attribution`` — what ``sessionledger blame`` reads."""
        answer = self.client.get(f"/api/v1/projects/{self.slug}/commits/{sha}/attribution").json()
        found: dict[str, str] = {}
        for record in answer["records"]:
            vendor = record["metadata"]["dev.sessionledger"]
            for entry in record["files"]:
                hashes = dict(vendor["line_hashes"][entry["path"]])
                for item in entry["conversations"]:
                    if item["contributor"]["type"] != "ai":
                        continue
                    for span in item["ranges"]:
                        for number in range(span["start_line"], span["end_line"] + 1):
                            found[hashes[number]] = vendor["session"]["id"]
        return found


def bind(project: Project) -> RepositoryBinding:
    """acme's installation of the App, with acme/api bound to ``project``."""
    acme = ForgeInstallation.objects.create(forge="github", external_id=str(INSTALLATION), account="acme")
    return RepositoryBinding.objects.create(
        installation=acme, repository_id=str(REPO), full_name=FULL_NAME, project=project
    )


def deliver(event: str, payload: dict[str, Any]) -> Any:
    body = encode(payload)
    return Client().post(
        "/integrations/github/webhook", body, content_type="application/json", **github_headers(event, body)
    )

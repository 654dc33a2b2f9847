"""The forge seam: what every forge adapter does, and the typed events it parses webhooks into."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol


class BadPayload(ValueError):
    """A verified delivery whose body is not what the forge documents."""


@dataclass(frozen=True)
class Repository:
    forge_id: str
    full_name: str


@dataclass(frozen=True)
class PullRequestEvent:
    installation_id: str
    repository: Repository
    action: str  # opened, reopened, synchronize, edited, closed (GitLab's names are mapped to these)
    number: int
    title: str
    author: str
    base_ref: str
    head_ref: str
    state: str  # open, closed, merged
    head_sha: str
    merged: bool
    merge_commit_sha: str
    base_sha: str = ""  # the base branch's commit the PR was compared with (GitHub's compare beyond 250)


@dataclass(frozen=True)
class PushEvent:
    installation_id: str
    repository: Repository
    ref: str
    before: str
    after: str
    forced: bool
    default_branch: str = ""


@dataclass(frozen=True)
class Commit:
    """One commit as the forge's API describes it: its parents and the patch id of its diff."""

    sha: str
    parents: tuple[str, ...]
    patch_id: str  # integrations.patchid; "" when the commit changes no text


@dataclass(frozen=True)
class InstallationEvent:
    installation_id: str
    account: str
    action: str  # created, deleted, suspend, unsuspend, added, removed, …
    added: tuple[Repository, ...] = ()
    removed: tuple[Repository, ...] = ()


Event = PullRequestEvent | PushEvent | InstallationEvent


class ForgeAdapter(Protocol):
    name: str

    def verify(self, headers: Mapping[str, str], body: bytes) -> bool:
        """Whether the delivery carries the forge's proof (compared in constant time)."""

    def delivery_id(self, headers: Mapping[str, str]) -> str:
        """The delivery's unique id ("" when absent)."""

    def parse(self, headers: Mapping[str, str], body: bytes) -> Event | None:
        """The event, or None for events and actions we do not handle. Raises BadPayload."""

    def pull_request_commits(
        self, installation_id: str, repository: Repository, number: int, *, base_sha: str, head_sha: str
    ) -> list[str]:
        """The PR's commit shas, oldest first, every page (past any cap of the forge's list)."""

    def commit(self, installation_id: str, repository: Repository, sha: str) -> Commit:
        """The commit's parents and patch id."""

    def comment_write(
        self, installation_id: str, repository: Repository, number: int, *, comment_id: str, marker: str, body: str
    ) -> str:
        """Edit the PR's comment ``comment_id`` — or, without one, the comment holding ``marker`` — or
        create it; the comment's id."""

    def check_run_write(
        self, installation_id: str, repository: Repository, *, head_sha: str, check_run_id: str, summary: str
    ) -> str:
        """Edit check run ``check_run_id``, or create one on ``head_sha``; its id ("" where the forge has none)."""

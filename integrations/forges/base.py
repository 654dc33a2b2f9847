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


@dataclass(frozen=True)
class PushEvent:
    installation_id: str
    repository: Repository
    ref: str
    before: str
    after: str
    forced: bool


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

    def pull_request_commits(self, installation_id: str, repository: Repository, number: int) -> list[str]:
        """The PR's commit shas, oldest first, every page."""

    def upsert_comment(self, installation_id: str, repository: Repository, number: int, marker: str, body: str) -> None:
        """Edit the PR's comment holding ``marker``, or create it."""

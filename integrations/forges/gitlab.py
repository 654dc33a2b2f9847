"""GitLab merge requests: a project or group webhook with its secret token, the REST API v4 with a
token (docs/forges.md). A GitLab "installation" is the top-level namespace of the project."""

from __future__ import annotations

import hmac
import json
from collections.abc import Mapping
from typing import Any

import requests
from django.conf import settings

from integrations.forges import http
from integrations.forges.base import BadPayload, Commit, Event, PullRequestEvent, PushEvent, Repository
from integrations.patchid import FileDiff, patch_id

# GitLab's merge request actions, as GitHub's names (one vocabulary for services).
ACTIONS = {"open": "opened", "reopen": "reopened", "update": "synchronize", "close": "closed", "merge": "closed"}
STATES = {"opened": "open", "closed": "closed", "merged": "merged", "locked": "open"}


def _project(payload: Any) -> tuple[str, Repository]:
    project = payload["project"]
    full_name = str(project["path_with_namespace"])
    return full_name.split("/", 1)[0], Repository(forge_id=str(int(project["id"])), full_name=full_name)


def _merge_request(payload: Any) -> PullRequestEvent | None:
    mr = payload["object_attributes"]
    action = ACTIONS.get(str(mr.get("action")))
    if action is None:
        return None
    if action == "synchronize" and "oldrev" not in mr:
        action = "edited"  # an update without new commits: title, description, labels…
    namespace, repository = _project(payload)
    state = STATES.get(str(mr["state"]), "open")
    return PullRequestEvent(
        installation_id=namespace,
        repository=repository,
        action=action,
        number=int(mr["iid"]),
        title=str(mr["title"]),
        author=str(payload["user"]["username"]),
        base_ref=str(mr["target_branch"]),
        head_ref=str(mr["source_branch"]),
        state=state,
        head_sha=str(mr["last_commit"]["id"]),
        merged=state == "merged",
        # A squash merge without a merge commit (fast-forward) names its one commit squash_commit_sha.
        merge_commit_sha=str(mr.get("merge_commit_sha") or mr.get("squash_commit_sha") or ""),
    )


class GitLab:
    name = "gitlab"

    def verify(self, headers: Mapping[str, str], body: bytes) -> bool:
        secret = settings.SESSIONLEDGER_GITLAB_WEBHOOK_SECRET
        if not secret:
            return False
        return hmac.compare_digest(secret.encode(), headers.get("X-Gitlab-Token", "").encode())

    def delivery_id(self, headers: Mapping[str, str]) -> str:
        return headers.get("X-Gitlab-Event-UUID", "")

    def parse(self, headers: Mapping[str, str], body: bytes) -> Event | None:
        event = headers.get("X-Gitlab-Event", "")
        try:
            payload = json.loads(body)
            if event == "Merge Request Hook":
                return _merge_request(payload)
            if event == "Push Hook":
                namespace, repository = _project(payload)
                return PushEvent(
                    installation_id=namespace,
                    repository=repository,
                    ref=str(payload["ref"]),
                    before=str(payload["before"]),
                    after=str(payload["after"]),
                    forced=False,  # GitLab does not say; a merge request's update carries oldrev
                    default_branch=str(payload["project"].get("default_branch") or ""),
                )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise BadPayload(f"{event}: {exc!r}") from exc
        return None

    def _session(self) -> requests.Session:
        session = requests.Session()
        session.headers["PRIVATE-TOKEN"] = settings.SESSIONLEDGER_GITLAB_TOKEN
        return session

    def _base(self) -> str:
        return f"{settings.SESSIONLEDGER_GITLAB_URL}/api/v4"

    def pull_request_commits(
        self, installation_id: str, repository: Repository, number: int, *, base_sha: str, head_sha: str
    ) -> list[str]:
        path = f"/projects/{int(repository.forge_id)}/merge_requests/{int(number)}/commits"
        with self._session() as session:
            shas = [str(item["id"]) for item in http.pages(session, self._base(), path, params={"per_page": 100})]
        return shas[::-1]  # GitLab lists the newest first

    def commit(self, installation_id: str, repository: Repository, sha: str) -> Commit:
        path = f"/projects/{int(repository.forge_id)}/repository/commits/{http.commit_id(sha)}"
        with self._session() as session:
            data = http.request(session, "GET", self._base() + path).json()
            diffs = list(http.pages(session, self._base(), path + "/diff", params={"per_page": 100}))
        files = [
            FileDiff(
                old_path="" if diff.get("new_file") else str(diff["old_path"]),
                new_path="" if diff.get("deleted_file") else str(diff["new_path"]),
                patch=str(diff.get("diff") or ""),
                old_mode=str(diff.get("a_mode") or "100644"),
                new_mode=str(diff.get("b_mode") or "100644"),
            )
            for diff in diffs
        ]
        return Commit(
            sha=str(data["id"]), parents=tuple(str(p) for p in data.get("parent_ids") or []), patch_id=patch_id(files)
        )

    def comment_write(
        self, installation_id: str, repository: Repository, number: int, *, comment_id: str, marker: str, body: str
    ) -> str:
        path = f"/projects/{int(repository.forge_id)}/merge_requests/{int(number)}/notes"
        with self._session() as session:
            return http.comment_write(
                session,
                self._base(),
                path,
                edit=lambda found: ("PUT", f"{self._base()}{path}/{int(found)}"),
                comment_id=comment_id,
                marker=marker,
                body=body,
            )

    def check_run_write(
        self, installation_id: str, repository: Repository, *, head_sha: str, check_run_id: str, summary: str
    ) -> str:
        return ""  # GitLab has no check runs; the note is the summary

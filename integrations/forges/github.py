"""GitHub, as a GitHub App: webhooks signed with the App's secret, API calls with installation
tokens minted from the App's private key (docs/forges.md)."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import jwt
import requests
from django.conf import settings

from integrations.forges import http
from integrations.forges.base import (
    BadPayload,
    Commit,
    Event,
    InstallationEvent,
    PullRequestEvent,
    PushEvent,
    Repository,
)
from integrations.patchid import FileDiff, patch_id

PR_ACTIONS = frozenset({"opened", "reopened", "synchronize", "edited", "closed"})
INSTALLATION_ACTIONS = frozenset({"created", "deleted", "suspend", "unsuspend"})
ACCEPT = "application/vnd.github+json"
CHECK_RUN_NAME = "Sessionledger"
SUMMARY_MAX = 65535  # characters of a check run's output.summary
PR_COMMITS_CAP = 250  # GitHub's list of a PR's commits stops here; the compare API has them all
TOKEN_MARGIN = 300  # seconds: a cached installation token is renewed this long before it expires


def _repository(data: Any) -> Repository:
    return Repository(forge_id=str(data["id"]), full_name=str(data["full_name"]))


def _pull_request(payload: Any) -> PullRequestEvent:
    pr = payload["pull_request"]
    merged = bool(pr.get("merged"))
    return PullRequestEvent(
        installation_id=str(payload["installation"]["id"]),
        repository=_repository(payload["repository"]),
        action=str(payload["action"]),
        number=int(pr["number"]),
        title=str(pr["title"]),
        author=str(pr["user"]["login"]),
        base_ref=str(pr["base"]["ref"]),
        head_ref=str(pr["head"]["ref"]),
        state="merged" if merged else str(pr["state"]),
        head_sha=str(pr["head"]["sha"]),
        merged=merged,
        merge_commit_sha=str(pr.get("merge_commit_sha") or "") if merged else "",
        base_sha=str(pr["base"].get("sha") or ""),
    )


def _installation(event: str, payload: Any) -> InstallationEvent:
    installation = payload["installation"]
    added = payload.get("repositories_added") or []
    if event == "installation" and payload["action"] == "created":
        added = payload.get("repositories") or []
    return InstallationEvent(
        installation_id=str(installation["id"]),
        account=str(installation["account"]["login"]),
        action=str(payload["action"]),
        added=tuple(_repository(r) for r in added),
        removed=tuple(_repository(r) for r in payload.get("repositories_removed") or []),
    )


def _file(entry: Any) -> FileDiff:
    """One entry of a commit's ``files`` (status added, removed, modified, renamed…)."""
    status, name = str(entry.get("status")), str(entry["filename"])
    return FileDiff(
        old_path="" if status == "added" else str(entry.get("previous_filename") or name),
        new_path="" if status == "removed" else name,
        patch=str(entry.get("patch") or ""),
    )


class GitHub:
    name = "github"

    def __init__(self) -> None:
        self._tokens: dict[tuple[str, str], tuple[str, float]] = {}  # (API, installation) → token, expiry
        self._lock = threading.Lock()

    def verify(self, headers: Mapping[str, str], body: bytes) -> bool:
        secret = settings.SESSIONLEDGER_GITHUB_WEBHOOK_SECRET
        if not secret:
            return False  # not configured: nothing is trusted
        expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(expected.encode(), headers.get("X-Hub-Signature-256", "").encode())

    def delivery_id(self, headers: Mapping[str, str]) -> str:
        return headers.get("X-GitHub-Delivery", "")

    def parse(self, headers: Mapping[str, str], body: bytes) -> Event | None:
        event = headers.get("X-GitHub-Event", "")
        try:
            payload = json.loads(body)
            action = payload.get("action")
            if event == "pull_request" and action in PR_ACTIONS:
                return _pull_request(payload)
            if event == "push":
                return PushEvent(
                    installation_id=str(payload["installation"]["id"]),
                    repository=_repository(payload["repository"]),
                    ref=str(payload["ref"]),
                    before=str(payload["before"]),
                    after=str(payload["after"]),
                    forced=bool(payload.get("forced")),
                    default_branch=str(payload["repository"].get("default_branch") or ""),
                )
            if (event == "installation" and action in INSTALLATION_ACTIONS) or event == "installation_repositories":
                return _installation(event, payload)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise BadPayload(f"{event}: {exc!r}") from exc
        return None

    # --- the API ------------------------------------------------------------------------------------

    def app_jwt(self, now: float | None = None) -> str:
        """The App's own credential: a JWT signed with its private key, valid ten minutes at most
        (issued a minute back for clock drift, as GitHub advises)."""
        issued = int(now if now is not None else time.time()) - 60
        claims = {"iat": issued, "exp": issued + 600, "iss": settings.SESSIONLEDGER_GITHUB_APP_ID}
        return jwt.encode(claims, settings.SESSIONLEDGER_GITHUB_APP_PRIVATE_KEY, algorithm="RS256")

    def installation_token(self, session: requests.Session, installation_id: str) -> str:
        """An installation token, minted once and reused until five minutes before it expires (an
        hour): a merge that reads 300 commits asks GitHub for one token, not 300."""
        key = (settings.SESSIONLEDGER_GITHUB_API_URL, installation_id)
        with self._lock:
            cached = self._tokens.get(key)
        if cached and cached[1] > time.time():
            return cached[0]
        response = http.request(
            session,
            "POST",
            f"{settings.SESSIONLEDGER_GITHUB_API_URL}/app/installations/{int(installation_id)}/access_tokens",
            headers={"Authorization": f"Bearer {self.app_jwt()}", "Accept": ACCEPT},
        )
        data = response.json()
        token = str(data["token"])
        try:
            expires = datetime.fromisoformat(str(data["expires_at"])).timestamp() - TOKEN_MARGIN
        except (KeyError, ValueError):
            expires = 0.0  # not reusable
        with self._lock:
            self._tokens[key] = (token, expires)
        return token

    def _session(self, installation_id: str) -> requests.Session:
        session = requests.Session()
        session.headers.update({"Accept": ACCEPT, "X-GitHub-Api-Version": "2022-11-28"})
        session.headers["Authorization"] = f"token {self.installation_token(session, installation_id)}"
        return session

    def pull_request_commits(
        self, installation_id: str, repository: Repository, number: int, *, base_sha: str, head_sha: str
    ) -> list[str]:
        base, repo = settings.SESSIONLEDGER_GITHUB_API_URL, f"/repositories/{int(repository.forge_id)}"
        with self._session(installation_id) as session:
            items = http.pages(session, base, f"{repo}/pulls/{int(number)}/commits", params={"per_page": 100})
            shas = [str(item["sha"]) for item in items]
            if len(shas) >= PR_COMMITS_CAP and base_sha and head_sha:
                # Three dots: the commits of head not in base, from their merge base — the PR's, all of them.
                path = f"{repo}/compare/{http.commit_id(base_sha)}...{http.commit_id(head_sha)}"
                items = http.pages(session, base, path, params={"per_page": 100}, key="commits")
                shas = [str(item["sha"]) for item in items]
            return shas

    def commit(self, installation_id: str, repository: Repository, sha: str) -> Commit:
        base = settings.SESSIONLEDGER_GITHUB_API_URL
        with self._session(installation_id) as session:
            url = f"{base}/repositories/{int(repository.forge_id)}/commits/{http.commit_id(sha)}"
            data = http.request(session, "GET", url).json()
        return Commit(
            sha=str(data["sha"]),
            parents=tuple(str(parent["sha"]) for parent in data.get("parents") or []),
            patch_id=patch_id([_file(entry) for entry in data.get("files") or []]),
        )

    def comment_write(
        self, installation_id: str, repository: Repository, number: int, *, comment_id: str, marker: str, body: str
    ) -> str:
        base = settings.SESSIONLEDGER_GITHUB_API_URL
        repo = f"{base}/repositories/{int(repository.forge_id)}"
        path = f"/repositories/{int(repository.forge_id)}/issues/{int(number)}/comments"
        with self._session(installation_id) as session:
            return http.comment_write(
                session,
                base,
                path,
                edit=lambda found: ("PATCH", f"{repo}/issues/comments/{int(found)}"),
                comment_id=comment_id,
                marker=marker,
                body=body,
            )

    def check_run_write(
        self, installation_id: str, repository: Repository, *, head_sha: str, check_run_id: str, summary: str
    ) -> str:
        """A completed, neutral check run: it informs, it never blocks a merge."""
        base = settings.SESSIONLEDGER_GITHUB_API_URL
        runs = f"{base}/repositories/{int(repository.forge_id)}/check-runs"
        output = {"title": "Conversations behind this pull request", "summary": summary[:SUMMARY_MAX]}
        with self._session(installation_id) as session:
            if check_run_id:
                try:
                    http.request(session, "PATCH", f"{runs}/{int(check_run_id)}", json={"output": output})
                    return check_run_id
                except http.Gone:
                    pass
            body = {
                "name": CHECK_RUN_NAME,
                "head_sha": http.commit_id(head_sha),
                "status": "completed",
                "conclusion": "neutral",
                "output": output,
            }
            return str(int(http.request(session, "POST", runs, json=body).json()["id"]))

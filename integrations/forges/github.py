"""GitHub, as a GitHub App: webhooks signed with the App's secret, API calls with installation
tokens minted from the App's private key (docs/forges.md)."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

import jwt
import requests
from django.conf import settings

from integrations.forges import http
from integrations.forges.base import (
    BadPayload,
    Event,
    InstallationEvent,
    PullRequestEvent,
    PushEvent,
    Repository,
)

PR_ACTIONS = frozenset({"opened", "reopened", "synchronize", "edited", "closed"})
INSTALLATION_ACTIONS = frozenset({"created", "deleted", "suspend", "unsuspend"})
ACCEPT = "application/vnd.github+json"


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


class GitHub:
    name = "github"

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
        response = http.request(
            session,
            "POST",
            f"{settings.SESSIONLEDGER_GITHUB_API_URL}/app/installations/{int(installation_id)}/access_tokens",
            headers={"Authorization": f"Bearer {self.app_jwt()}", "Accept": ACCEPT},
        )
        return str(response.json()["token"])

    def _session(self, installation_id: str) -> requests.Session:
        session = requests.Session()
        session.headers.update({"Accept": ACCEPT, "X-GitHub-Api-Version": "2022-11-28"})
        session.headers["Authorization"] = f"token {self.installation_token(session, installation_id)}"
        return session

    def pull_request_commits(self, installation_id: str, repository: Repository, number: int) -> list[str]:
        with self._session(installation_id) as session:
            path = f"/repositories/{int(repository.forge_id)}/pulls/{int(number)}/commits"
            items = http.pages(session, settings.SESSIONLEDGER_GITHUB_API_URL, path, params={"per_page": 100})
            return [str(item["sha"]) for item in items]

    def upsert_comment(self, installation_id: str, repository: Repository, number: int, marker: str, body: str) -> None:
        base = settings.SESSIONLEDGER_GITHUB_API_URL
        path = f"/repositories/{int(repository.forge_id)}/issues/{int(number)}/comments"
        with self._session(installation_id) as session:
            for comment in http.pages(session, base, path, params={"per_page": 100}):
                if marker in str(comment.get("body") or ""):
                    url = f"{base}/repositories/{int(repository.forge_id)}/issues/comments/{int(comment['id'])}"
                    http.request(session, "PATCH", url, json={"body": body})
                    return
            http.request(session, "POST", base + path, json={"body": body})

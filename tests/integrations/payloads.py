"""Webhook bodies shaped like GitHub's and GitLab's documented examples (only the fields we read, and
a few around them), and the headers that sign them."""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from typing import Any

GITHUB_SECRET = "It's a Secret to Everybody"
GITLAB_SECRET = "gitlab-hook-token"


def github_repository(repo_id: int, full_name: str) -> dict[str, Any]:
    owner, name = full_name.split("/")
    return {
        "id": repo_id,
        "node_id": "R_kgDO",
        "name": name,
        "full_name": full_name,
        "private": True,
        "owner": {"login": owner, "id": 21031067, "type": "Organization"},
        "default_branch": "main",
    }


def pull_request(
    action: str,
    *,
    installation: int,
    repo_id: int,
    full_name: str,
    number: int = 2,
    head_sha: str = "a" * 40,
    title: str = "Update the README with new information.",
    merged: bool = False,
    state: str = "open",
    merge_commit_sha: str = "c4295bd74fb0f4fbd0f2b9b2d4e3a0e4b0b9b2d4",
) -> dict[str, Any]:
    return {
        "action": action,
        "number": number,
        "pull_request": {
            "url": f"https://api.github.com/repos/{full_name}/pulls/{number}",
            "id": 279147437,
            "number": number,
            "state": state,
            "locked": False,
            "title": title,
            "user": {"login": "Codertocat", "id": 21031067, "type": "User"},
            "body": "This is a pretty simple change that we need to pull into main.",
            "merged": merged,
            "merge_commit_sha": merge_commit_sha if merged else None,
            "head": {"label": "Codertocat:changes", "ref": "changes", "sha": head_sha},
            "base": {"label": "Codertocat:main", "ref": "main", "sha": "f95f852bd8fca8fcc58a9a2d6c842781e32a215e"},
        },
        "repository": github_repository(repo_id, full_name),
        "sender": {"login": "Codertocat", "id": 21031067, "type": "User"},
        "installation": {"id": installation, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMjM0Nzc="},
    }


def installation(action: str, *, installation: int, account: str, repositories: list[tuple[int, str]]) -> dict:
    return {
        "action": action,
        "installation": {
            "id": installation,
            "account": {"login": account, "id": 38302899, "type": "Organization"},
            "repository_selection": "selected",
            "app_id": 1,
        },
        "repositories": [{"id": i, "name": n.split("/")[1], "full_name": n, "private": True} for i, n in repositories],
        "sender": {"login": "octocat", "id": 1},
    }


def github_headers(event: str, body: bytes, *, delivery: str | None = None, secret: str = GITHUB_SECRET) -> dict:
    signature = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return {
        "HTTP_X_GITHUB_EVENT": event,
        "HTTP_X_GITHUB_DELIVERY": delivery or str(uuid.uuid4()),
        "HTTP_X_HUB_SIGNATURE_256": signature,
    }


def merge_request(
    action: str, *, project_id: int, path: str, iid: int = 1, last_commit: str = "a" * 40, oldrev: str | None = None
) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "id": 99,
        "iid": iid,
        "title": "MS-Viewport",
        "state": "opened" if action != "merge" else "merged",
        "action": action,
        "source_branch": "ms-viewport",
        "target_branch": "master",
        "last_commit": {"id": last_commit, "message": "fixed readme"},
        "merge_commit_sha": None,
    }
    if oldrev:
        attributes["oldrev"] = oldrev
    return {
        "object_kind": "merge_request",
        "event_type": "merge_request",
        "user": {"id": 1, "name": "Administrator", "username": "root"},
        "project": {
            "id": project_id,
            "name": path.split("/")[-1],
            "path_with_namespace": path,
            "default_branch": "master",
        },
        "object_attributes": attributes,
    }


def gitlab_headers(event: str, *, delivery: str | None = None, token: str = GITLAB_SECRET) -> dict:
    return {
        "HTTP_X_GITLAB_EVENT": event,
        "HTTP_X_GITLAB_EVENT_UUID": delivery or str(uuid.uuid4()),
        "HTTP_X_GITLAB_TOKEN": token,
    }


def encode(payload: dict) -> bytes:
    return json.dumps(payload).encode()

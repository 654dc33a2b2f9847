"""Absolute URLs of a session for API and page consumers (built from SITE_URL)."""

from __future__ import annotations

import re

from django.conf import settings

from projects.models import Project
from sessions_app.models import Session

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")  # the route's converter


def _absolute(path: str) -> str:
    return f"{settings.SITE_URL}{path}"


def session_api_url(session: Session) -> str:
    # Built by hand rather than reverse(): list pages call this 200 times (a test pins it to the route).
    return _absolute(f"/api/v1/projects/{session.project.slug}/sessions/{session.pk}")


def session_web_url(session: Session) -> str:
    return f"{session_web_url_base(session.project)}{session.pk}"


def session_web_url_base(project: Project) -> str:
    """``session_web_url`` without the session's id, for many sessions of one project (the context digest)."""
    return _absolute(f"/p/{project.slug}/s/")


def commit_web_url(project: Project, commit_hash: str) -> str:
    """The commit permalink ``/p/{project}/c/{sha}`` (it follows relinks after a rebase)."""
    return _absolute(f"/p/{project.slug}/c/{commit_hash}")


def message_web_url(project: Project, uuid: str) -> str:
    """The short message permalink ``/p/{project}/m/{uuid}``: it redirects to the page holding the message."""
    return _absolute(f"/p/{project.slug}/m/{uuid}")


def is_message_web_url(project: Project, url: object) -> bool:
    """Whether ``url`` is one of ``message_web_url``'s: the only address an attribution record may
    hold (docs/security.md "Records and links a teammate cannot forge")."""
    prefix = _absolute(f"/p/{project.slug}/m/")
    return isinstance(url, str) and url.startswith(prefix) and _UUID.fullmatch(url[len(prefix) :]) is not None

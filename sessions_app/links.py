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


def message_path(project: Project, url: object) -> str | None:
    """The path ``/p/{project}/m/{uuid}`` if ``url`` is that message permalink, absolute (on this
    SITE_URL) or already relative; else None. The only address an attribution record may hold
    (docs/security.md "Records and links a teammate cannot forge"). Records store the path, so a
    change of SITE_URL (or of make run's PORT) leaves them valid; answers make it absolute."""
    if not isinstance(url, str):
        return None
    path = url.removeprefix(settings.SITE_URL) if url.startswith(f"{settings.SITE_URL}/") else url
    prefix = f"/p/{project.slug}/m/"
    return path if path.startswith(prefix) and _UUID.fullmatch(path[len(prefix) :]) else None


def is_message_web_url(project: Project, url: object) -> bool:
    return message_path(project, url) is not None


def absolute_url(path: str) -> str:
    """A stored relative link as an API answer gives it."""
    return _absolute(path) if path.startswith("/") else path

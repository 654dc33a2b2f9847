"""Absolute URLs of a session for API and page consumers (built from SITE_URL)."""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse

from sessions_app.models import Session


def _absolute(path: str) -> str:
    return f"{settings.SITE_URL}{path}"


def session_api_url(session: Session) -> str:
    return _absolute(reverse("api-session", kwargs={"project": session.project.slug, "session_id": session.pk}))


def session_web_url(session: Session) -> str:
    return _absolute(f"/p/{session.project.slug}/s/{session.pk}")

"""HTTP validators for the pages of a session's conversation (the session page, its later pages and
the whole-conversation page), so that a second view costs a 304 instead of the page (docs/ui.md).

The pages are per reader (the project's authorisation decides who sees them, the author's and the
admin's panels differ), so they are ``Cache-Control: private, no-cache``: only the reader's browser
keeps a copy, and it asks the server before each use. Asking is the point — the server checks the
reader's rights again and records the read in the access log, as it does for a page it renders —
and it is cheap: the ``ETag`` is computed from what the page depends on, before anything is read
from the bucket or rendered:

- each session's row as loaded for the page (its content generation ``content_storage_key`` and
  ``processed_at``, and every field the page shows: headline, commit, status, neighbours…);
- the query string (filters, page, ``?at=``);
- ``RENDERER_VERSION`` (a deploy that changes how cards look);
- the reader: their user id, role in the project and projects (the switcher), and the CSRF secret
  the page's forms carry;
  for an admin, the access log the page lists, other readers' rows only (the admin's own reads,
  counted in at each view, would otherwise make every view a new page).

``Last-Modified`` is the content's processing time, for information: a request's ``If-None-Match``
decides, and ``If-Modified-Since`` alone never earns a 304 (a new renderer or a changed role would
not show in a date).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.cache import get_conditional_response
from django.utils.http import http_date

from frontend.session_page.page_cache import RENDERER_VERSION
from projects.models import Role
from sessions_app.models import AccessLog, Session

CACHE_CONTROL = "private, no-cache"


@dataclass(frozen=True, slots=True)
class Validators:
    etag: str  # quoted, strong: the gzip middleware weakens it when it compresses the page
    last_modified: datetime | None


def page_validators(request: HttpRequest, sessions: Sequence[Session], role: str, projects: Any) -> Validators:
    """The validators of the page ``request`` asks for, showing ``sessions`` to a reader of ``role``
    whose project switcher lists ``projects``."""
    rows = [{name: value for name, value in vars(s).items() if not name.startswith("_")} for s in sessions]
    switcher = [str(project.pk) for project in projects]
    viewer: list[Any] = [request.user.pk, role, switcher, request.META.get("CSRF_COOKIE", "")]
    if role == Role.ADMIN:
        viewer.append(_others_reads(request, sessions))
    asked = sorted(request.GET.lists())
    digest = hashlib.sha256(json.dumps([RENDERER_VERSION, rows, asked, viewer], default=str).encode())
    stamps = [s.processed_at for s in sessions if s.processed_at]
    return Validators(f'"{digest.hexdigest()[:32]}"', max(stamps) if stamps else None)


def _others_reads(request: HttpRequest, sessions: Sequence[Session]) -> list[Any]:
    reads = AccessLog.objects.filter(project_id=sessions[0].project_id, session_id__in=[s.pk for s in sessions])
    return list(reads.exclude(user_id=request.user.pk).order_by("-at").values_list("id", "at", "count")[:5])


def not_modified(request: HttpRequest, validators: Callable[[], Validators]) -> HttpResponse | None:
    """A 304 carrying the validators when the reader's copy is still this page; else None. The
    validators are computed only for a request that brings a tag (a first view skips them)."""
    if "HTTP_IF_NONE_MATCH" not in request.META:
        return None
    found = validators()
    response = get_conditional_response(request, etag=found.etag)
    return mark(response, found) if response is not None else None


def mark(response: HttpResponse, validators: Validators) -> HttpResponse:
    response["ETag"] = validators.etag
    response["Cache-Control"] = CACHE_CONTROL
    if validators.last_modified is not None:
        response["Last-Modified"] = http_date(validators.last_modified.timestamp())
    return response

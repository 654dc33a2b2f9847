"""HTTP validators for the pages of a session's conversation (the session page, its later pages and
the whole-conversation page), so that a second view costs a 304 instead of the page (docs/ui.md).

The pages are per reader (the project's authorisation decides who sees them, the author's and the
admin's panels differ), so they are ``Cache-Control: private, no-cache``: only the reader's browser
keeps a copy, and it asks the server before each use. Asking is the point — the server checks the
reader's rights again and records the read in the access log, as it does for a page it renders —
and it is cheap: the ``ETag`` is computed from what the page depends on, before anything is read
from the bucket or rendered:

- what the page's content shows (``content_digest``): each session's row as loaded for the page (its
  content generation ``content_storage_key`` and ``processed_at``, and every field the page shows:
  headline, commit, status, neighbours…), its author's address and its project's name, what else the
  view lists (the commit's pull requests), the query string (filters, page, ``?at=``) and
  ``PAGE_VERSION`` (a deploy that changes how cards look or any template);
- the reader: their user id and address, role in the project and projects (the switcher), and the
  CSRF secret the page's forms carry;
  for an admin, the access log the page lists, other readers' rows only (the admin's own reads,
  counted in at each view, would otherwise make every view a new page).

The content digest also names what the server keeps of these pages for every reader
(``content_key``): the page's content without the reader's frame (the session page's and the
whole conversation's, rendered once and shared by readers whose page shows the same: everyone but
an admin, whose page lists the access log) and the later pages' response, gzip-compressed (no reader
part at all). A kept entry is read only after the view's permission checks, and the read is recorded
as for a rendered page.

``Last-Modified`` is the content's processing time, for information: a request's ``If-None-Match``
decides, and ``If-Modified-Since`` alone never earns a 304 (a new renderer or a changed role would
not show in a date).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import secrets
import struct
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.middleware.gzip import GZipMiddleware
from django.template.loader import render_to_string
from django.utils.cache import get_conditional_response, patch_vary_headers
from django.utils.http import http_date
from django.utils.safestring import SafeString
from django.utils.text import compress_string

from frontend import stylesheets
from frontend.forms import MessageFilterForm
from frontend.session_page import page_cache
from frontend.session_page.page_cache import RENDERER_VERSION
from projects.models import Role
from sessions_app.models import AccessLog, Session

CACHE_CONTROL = "private, no-cache"
GZIP_LEVEL = 6  # as GZipMiddleware (django.utils.text.compress_string)
TEMPLATES = (Path(__file__).parent / "templates", Path(__file__).parent.parent / "config" / "templates")


def page_version(folders: Sequence[Path] = TEMPLATES) -> str:
    """``RENDERER_VERSION`` and a digest of the Django templates the pages are rendered with and of the
    stylesheets in their head: a deploy that changes any of them gives every page a new tag and new
    kept entries."""
    digest = hashlib.sha256(RENDERER_VERSION.encode() + stylesheets.text().encode())
    for folder in folders:
        for path in sorted(folder.rglob("*.html")):
            digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


PAGE_VERSION = page_version()


@dataclass(frozen=True, slots=True)
class Body:
    """A page's content without the reader's frame (the topbar, messages, forms with a CSRF token):
    what the head adds (the later pages' preload) and the main column, rendered once and kept for
    every reader whose page shows the same (``content_key``), with the main column compressed once
    (``deflated``, empty until the body is kept: ``spliced_gzip``)."""

    head: SafeString
    main: SafeString
    deflated: bytes = b""

    @classmethod
    def of(cls, main: str, context: dict[str, Any]) -> Body:
        """Rendered from the template ``main`` and the head's preload, with ``context`` (no request:
        nothing of the reader's)."""
        return cls(render_to_string("frontend/session/preload.html", context), render_to_string(main, context))

    def compressed(self) -> Body:
        """This body with its main column compressed, to be kept and spliced into every view's page."""
        return Body(self.head, self.main, deflated(self.main.encode()))


def deflated(data: bytes, *, final: bool = False) -> bytes:
    """``data`` as raw deflate blocks ending on a byte boundary (a sync flush, no final block): a run
    that can stand anywhere in a deflate stream, since it refers to nothing before it; ``final``:
    the stream's last run, ending in its final block."""
    compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush(zlib.Z_FINISH if final else zlib.Z_SYNC_FLUSH)


@cache
def _stylesheets_deflated() -> tuple[bytes, bytes]:
    element = stylesheets.element().encode()
    return element, deflated(element)


def spliced_gzip(request: HttpRequest, page: bytes, body: Body) -> bytes | None:
    """``page`` gzip-compressed as ``GZipMiddleware`` would (level 6, random header bytes), with its
    stylesheets and ``body``'s main column taken compressed as they are kept: only the reader's frame
    around them is compressed per view (it holds the CSRF token, which so shares no compression
    window with the content). None when the browser takes no gzip, the body was not kept compressed,
    or the page does not hold them in that order (the middleware then compresses it whole)."""
    if not body.deflated or not gzip_accepted(request):
        return None
    runs: list[bytes] = []
    at = 0
    for raw, blocks in (_stylesheets_deflated(), (body.main.encode(), body.deflated)):
        found = page.find(raw, at)
        if found < 0:
            return None
        runs += [deflated(page[at:found]), blocks]
        at = found + len(raw)
    runs.append(deflated(page[at:], final=True))
    # gzip's header as django.utils.text.compress_string writes it: a name of random length (BREACH)
    name = b"a" * secrets.randbelow(GZipMiddleware.max_random_bytes) + b"\0"
    header = b"\x1f\x8b\x08" + bytes([gzip.FNAME]) + b"\0\0\0\0\0\xff" + name
    return header + b"".join(runs) + struct.pack("<2I", zlib.crc32(page), len(page) & 0xFFFFFFFF)


@dataclass(frozen=True, slots=True)
class Validators:
    etag: str  # quoted, strong: the gzip middleware weakens it when it compresses the page
    last_modified: datetime | None


def content_digest(request: HttpRequest, sessions: Sequence[Session], shown: Sequence[Any] = ()) -> str:
    """A digest of what the content of the page ``request`` asks for shows, whoever reads it:
    ``sessions``' rows (with their author's address and their project's name) and ``shown``, what
    else the view lists (JSON-able)."""
    rows = [
        {
            **{name: value for name, value in vars(s).items() if not name.startswith("_")},
            "author_email": s.author.email if s.author else None,  # loaded with the row (select_related)
            "project": [s.project.slug, s.project.name],
        }
        for s in sessions
    ]
    # only what the page reads: another parameter (`?x=1`, `?x=2`…) must not make another kept copy
    asked = sorted((name, values) for name, values in request.GET.lists() if name in MessageFilterForm.base_fields)
    return _digest([PAGE_VERSION, rows, asked, list(shown)])


def content_key(kind: str, request: HttpRequest, sessions: Sequence[Session], shown: Sequence[Any] = ()) -> str:
    """Where the server keeps what ``kind`` of page it made of this content for every reader."""
    return f"{kind}:{sessions[0].pk}:{content_digest(request, sessions, shown)}"


def page_validators(
    request: HttpRequest, sessions: Sequence[Session], role: str, projects: Any, shown: Sequence[Any] = ()
) -> Validators:
    """The validators of the page ``request`` asks for, showing ``sessions`` (and ``shown``: what else
    the view lists) to a reader of ``role`` whose project switcher lists ``projects``."""
    switcher = [[str(project.pk), project.slug, project.name, project.repo] for project in projects]
    user = request.user
    viewer: list[Any] = [user.pk, getattr(user, "email", ""), role, switcher, request.META.get("CSRF_COOKIE", "")]
    if role == Role.ADMIN:
        viewer.append(_others_reads(request, sessions))
    digest = _digest([content_digest(request, sessions, shown), viewer])
    stamps = [s.processed_at for s in sessions if s.processed_at]
    return Validators(f'"{digest}"', max(stamps) if stamps else None)


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, default=str).encode()).hexdigest()[:32]


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


def framed(request: HttpRequest, response: HttpResponse, body: Body, validators: Validators) -> HttpResponse:
    """A rendered page around a kept ``body``, marked with its validators and, when it can be,
    compressed around the body's kept compression (``spliced_gzip``); else left to the middleware."""
    spliced = spliced_gzip(request, response.content, body)
    return gzipped(response, spliced, validators) if spliced is not None else mark(response, validators)


def gzip_accepted(request: HttpRequest) -> bool:
    return "gzip" in request.META.get("HTTP_ACCEPT_ENCODING", "")


def kept_gzipped(request: HttpRequest, key: str | None) -> bytes | None:
    """The gzip-compressed response kept under ``key`` (``content_key``), for a browser that takes
    gzip; else None."""
    if key is None or not gzip_accepted(request):
        return None
    found = page_cache.cached(key)
    return found if isinstance(found, bytes) else None


def gzipped(response: HttpResponse, body: bytes, validators: Validators) -> HttpResponse:
    """``response`` carrying ``body``, already gzip-compressed, marked as ``GZipMiddleware`` marks
    what it compresses (which then leaves it alone)."""
    response.content = body
    response["Content-Encoding"] = "gzip"
    response["Content-Length"] = str(len(body))
    patch_vary_headers(response, ("Accept-Encoding",))
    mark(response, validators)
    response["ETag"] = f"W/{validators.etag}"  # a compressed copy of the page, as GZipMiddleware says
    return response


def keep_gzipped(request: HttpRequest, key: str | None, response: HttpResponse, validators: Validators) -> HttpResponse:
    """``response`` (rendered, 200) gzip-compressed once and kept under ``key`` for every reader, when the
    browser takes gzip; else ``response`` as the middleware would compress it."""
    if key is None or not gzip_accepted(request):
        return mark(response, validators)
    # the middleware's compression, random header bytes included (docs/ui.md, gzip)
    body = compress_string(response.content, max_random_bytes=GZipMiddleware.max_random_bytes)
    page_cache.keep(key, body)
    return gzipped(response, body, validators)

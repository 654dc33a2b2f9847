"""The session page, rendered once: each page of a session's conversation is kept in the cache.

A session's content never changes once processed — only ``reprocess`` rewrites it, and that sets
``processed_at`` again — so what ``frontend.reading.read`` makes of it (the page's cards as HTML,
the turn navigation, the totals) is a function of:

- the session and its content generation (``content_storage_key``, ``processed_at``);
- what the reader asked for: the filters (roles, since, until, text), the page number and the
  message a permalink asks for (``?at=``);
- who the prompts are attributed to (the author's name, in the cards);
- the renderer's code: ``RENDERER_VERSION`` is a digest of the ``frontend`` package's modules, so a
  deploy that changes how cards look never serves the old HTML.

The cache sits at the view boundary (``frontend.views.sessions``) and only after the permission
checks: a reader who may not see the session gets its 404 before any key is even computed, and a
cached page still records its read in the access log. Cache keys carry the session's id, which is
unique across projects. When the cache is down the page is rendered as if nothing were cached.
``SESSIONLEDGER_PAGE_CACHE_SECONDS`` (default a day; 0 turns it off) bounds how long a page stays.

The worker renders the first page of the default view as it finishes a session of at least
``WARM_MIN_RAW_BYTES`` (``warm``, called through the ``session_processed`` signal): the first reader of
a long session — the reviewer who follows the link in a pull request — gets that page from the cache
instead of decoding and rendering it. Below that size the first reader renders it: a page of a small
segment takes a millisecond or two, which would be a quarter of the worker's whole task for a 10 KB
segment (docs/scaling.md, worker), while for a long one it is a few percent of its processing and saves
its first reader the decoding and rendering (docs/scaling.md, session page).

The decoded content document is kept too, for ``DOCUMENT_SECONDS``, under the same content generation:
a reader who moves to another page or filter of the session they just opened skips the blob read and
the JSON decode (a 3.5 MB session: ~1 ms to unpickle against ~6 ms to read and decode). Documents of
sessions over ``DOCUMENT_MAX_RAW_BYTES`` are not kept, so one huge session cannot fill the cache.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.urls import reverse

from frontend.forms import ALL_ROLES, MessageFilterForm
from frontend.reading import read
from frontend.render import Where
from sessions_app.models import Session

logger = logging.getLogger(__name__)


def _renderer_version() -> str:
    """A digest of every Python module of ``frontend`` (where a document becomes HTML): any change to them
    — a new module included — gives pages new keys, so a deploy never serves HTML of the old code."""
    digest = hashlib.sha256()
    package = Path(__file__).parent
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


RENDERER_VERSION = _renderer_version()
DOCUMENT_SECONDS = 600
DOCUMENT_MAX_RAW_BYTES = 16 * 1024 * 1024
WARM_MIN_RAW_BYTES = 256 * 1024


def page_key(session: Session, form: MessageFilterForm, where: Where) -> str | None:
    """The cache key of this page of this session under these filters, or None when it is not cached."""
    if not settings.SESSIONLEDGER_PAGE_CACHE_SECONDS or not session.content_storage_key:
        return None
    roles = sorted(form.roles) if set(form.roles) != set(ALL_ROLES) else None
    moments = [form.value(name).isoformat() if form.value(name) else None for name in ("since", "until")]
    asked = [
        str(session.content_storage_key),
        session.processed_at.isoformat() if session.processed_at else None,
        roles,
        *moments,
        form.value("q") or "",
        form.value("page") or 1,
        form.value("at") or "",  # a message permalink picks the page that holds it
        where.session_url,
        where.author,
    ]
    digest = hashlib.sha256(json.dumps(asked).encode()).hexdigest()[:32]
    return f"session-page:{RENDERER_VERSION}:{session.pk}:{digest}"


def document_key(session: Session) -> str | None:
    """The cache key of the session's decoded content document, or None when it is not cached."""
    if not settings.SESSIONLEDGER_PAGE_CACHE_SECONDS or not session.content_storage_key:
        return None
    if session.raw_size_bytes > DOCUMENT_MAX_RAW_BYTES:
        return None
    generation = [str(session.content_storage_key), session.processed_at.isoformat() if session.processed_at else None]
    digest = hashlib.sha256(json.dumps(generation).encode()).hexdigest()[:32]
    return f"session-document:{session.pk}:{digest}"


def cached(key: str | None) -> Any:
    if key is None:
        return None
    try:
        return cache.get(key)
    except Exception as exc:  # the cache is an optimisation: down, the page is rendered
        logger.warning("session page cache unavailable: %s", exc)
        return None


def keep(key: str | None, value: Any, seconds: int | None = None) -> None:
    if key is None or value is None:
        return
    try:
        cache.set(key, value, seconds or settings.SESSIONLEDGER_PAGE_CACHE_SECONDS)
    except Exception as exc:
        logger.warning("session page not cached: %s", exc)


def page_where(session: Session) -> Where:
    """The session's URL and whose prompts its cards show: part of every page's key."""
    url = reverse("session", kwargs={"project": session.project.slug, "session_id": session.pk})
    return Where(url, (session.author.email if session.author else "").split("@")[0])


def warm(session: Session, document: dict[str, Any]) -> None:
    """Render page 1 of ``session`` as a reader without filters would ask for it, and keep it.

    ``session`` carries the content generation the worker just committed (``content_storage_key``,
    ``processed_at``), so the key is the one that reader's request computes.
    """
    if session.raw_size_bytes < WARM_MIN_RAW_BYTES:
        return
    form = MessageFilterForm({})
    form.is_valid()
    where = page_where(session)
    key = page_key(session, form, where)
    if key is None:
        return
    reading = read(document, form, where=where, params={})
    keep(key, reading)

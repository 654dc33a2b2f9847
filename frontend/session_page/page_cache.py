"""The session page, rendered once: each page of a session's conversation is kept in the cache.

A session's content never changes once processed — only ``reprocess`` rewrites it, and that sets
``processed_at`` again — so what ``frontend.session_page.reading`` makes of it (the page's cards as HTML,
the turn navigation, the totals) is a function of:

- the session and its content generation (``content_storage_key``, ``processed_at``);
- what the reader asked for: the filters (roles, since, until, text), the page number and the
  message a permalink asks for (``?at=``);
- who the prompts are attributed to (the author's name, in the cards);
- the renderer's code: ``RENDERER_VERSION`` is a digest of the ``frontend`` package's modules and its
  Jinja2 macros, so a deploy that changes how cards look never serves the old HTML.

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
its first reader the decoding and rendering (docs/scaling.md, session page). The whole conversation
the session is a segment of is warmed the same way, page 1 and its overview, when its segments add up
to that size (``frontend.views.conversation_page.warm``).

Beside each rendered page, the layout of its filters (``reading.Layout``: no HTML, no link, no
name) and each page's cards are kept (``reading_of``): another page, or a permalink, of a filter already
laid out costs that page, not the session (docs/scaling.md, huge sessions). The whole-conversation page
keys all of this by every segment's content generation.

The decoded content document is kept too, for ``DOCUMENT_SECONDS``, under the same content generation:
a reader who moves to another page or filter of the session they just opened skips the blob read and
the JSON decode (a 3.5 MB session: ~1 ms to unpickle against ~6 ms to read and decode). Documents of
sessions over ``DOCUMENT_MAX_RAW_BYTES`` are not kept, so one huge session cannot fill the cache.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from django.conf import settings
from django.core.cache import cache
from django.http import QueryDict
from django.urls import reverse

from frontend.forms import ALL_ROLES, MessageFilterForm
from frontend.session_page import reading
from frontend.session_page.reading import CardsWriter, Reading, cards_only
from frontend.session_page.render import Where
from sessions_app.models import Session

logger = logging.getLogger(__name__)


def renderer_version(package: Path = Path(__file__).parent.parent) -> str:
    """A digest of every Python module of ``frontend`` and of the Jinja2 macros Python renders with
    (where a document becomes HTML): any change to them — a new file included — gives pages new keys,
    so a deploy never serves HTML of the old code or templates."""
    digest = hashlib.sha256()  # ``package``: frontend/, not only this package (format, templating, …)
    for path in sorted([*package.rglob("*.py"), *(package / "jinja2").rglob("*.html")]):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


RENDERER_VERSION = renderer_version()
DOCUMENT_SECONDS = 600
DOCUMENT_MAX_RAW_BYTES = 16 * 1024 * 1024
WARM_MIN_RAW_BYTES = 256 * 1024


def generation(sessions: Sequence[Session]) -> list[Any]:
    """What a reading of these sessions' content depends on besides the request: each one's id and
    content generation (``reprocess`` writes a new key and ``processed_at``)."""
    return [
        [str(s.pk), str(s.content_storage_key), s.processed_at.isoformat() if s.processed_at else None]
        for s in sessions
    ]


def _filters(form: MessageFilterForm) -> list[Any]:
    roles = sorted(form.roles) if set(form.roles) != set(ALL_ROLES) else None
    moments = [form.value(name).isoformat() if form.value(name) else None for name in ("since", "until")]
    return [roles, *moments, form.value("q") or ""]


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()[:32]


def _cacheable(sessions: Sequence[Session]) -> bool:
    return bool(settings.SESSIONLEDGER_PAGE_CACHE_SECONDS) and all(s.content_storage_key for s in sessions)


def page_key(session: Session, form: MessageFilterForm, where: Where) -> str | None:
    """The cache key of this page of this session under these filters, or None when it is not cached."""
    return reading_key("session-page", [session], form, where)


def reading_key(kind: str, sessions: Sequence[Session], form: MessageFilterForm, where: Where) -> str | None:
    """The key of one page (``kind``: which page shows it) of the content of ``sessions`` under ``form``."""
    if not sessions or not _cacheable(sessions):
        return None
    asked = [
        generation(sessions),
        _filters(form),
        form.value("page") or 1,
        form.value("at") or "",  # a message permalink picks the page that holds it
        where.session_url,
        where.author,
    ]
    return f"{kind}:{RENDERER_VERSION}:{sessions[0].pk}:{_digest(asked)}"


def layout_key(sessions: Sequence[Session], form: MessageFilterForm) -> str | None:
    """The key of the layout of the content of ``sessions`` under ``form``'s filters, whatever the page
    and whoever reads it (it holds no link or name; ``frontend.session_page.reading.Layout``); None: not kept."""
    if not sessions or not _cacheable(sessions):
        return None
    return f"session-layout:{RENDERER_VERSION}:{sessions[0].pk}:{_digest([generation(sessions), _filters(form)])}"


def frame_key(sessions: Sequence[Session]) -> str | None:
    """The key of what the whole-conversation page keeps of its joined document (``whole.Frame``)."""
    if not sessions or not _cacheable(sessions):
        return None
    return f"whole-frame:{RENDERER_VERSION}:{sessions[0].pk}:{_digest(generation(sessions))}"


def document_key(session: Session) -> str | None:
    """The cache key of the session's decoded content document, or None when it is not cached."""
    if not _cacheable([session]):
        return None
    if session.raw_size_bytes > DOCUMENT_MAX_RAW_BYTES:
        return None
    return f"session-document:{session.pk}:{_digest(generation([session])[0][1:])}"


@dataclass(frozen=True)
class Page:
    """How a view gets a page of a conversation it may show (the permission checks are done)."""

    sessions: Sequence[Session]  # whose content it is: the session, or the segments of an agent session
    kind: str  # which page: its key's prefix
    where: Where
    params: dict[str, Any]
    load: Callable[[], tuple[dict[str, Any] | None, bool]]  # (document, whether it may be kept)
    write: CardsWriter = cards_only


def reading_of(page: Page, form: MessageFilterForm) -> Reading | None:
    """The page ``form`` asks for: from the cache; else rendered from the cached layout and that page's
    cards (the cost of one page); else laid out from the document, keeping the layout and every page.
    None when the document cannot be read."""
    key = reading_key(page.kind, page.sessions, form, page.where)
    found = cached(key)
    if found is not None:
        return cast(Reading, found)
    lkey = layout_key(page.sessions, form)
    layout = cached(lkey)
    number = reading.page_number(layout, form) if layout is not None else 0
    cards = cached(f"{lkey}:{number}") if layout is not None else None
    cacheable = True
    if layout is None or cards is None:
        document, cacheable = page.load()
        if document is None:
            return None
        layout, pages = reading.lay_out(document, form, params=page.params)
        number = reading.page_number(layout, form)
        cards = pages[number - 1]
        if cacheable and lkey is not None:
            keep_many({lkey: layout, **{f"{lkey}:{n}": p for n, p in enumerate(pages, start=1)}})
    result = reading.render_page(layout, cards, number, form, where=page.where, write=page.write)
    if cacheable:
        keep(key, result)
    return result


def pages_ahead(page: Page, form: MessageFilterForm) -> list[Reading] | None:
    """Pages ``page`` to ``through`` of ``form`` (at most ``AHEAD_PAGES``, none past the last), each
    as ``reading_of`` makes and keeps it: the later pages the script appends, in one response. None
    when the document cannot be read."""
    first = form.value("page") or 1
    last = min(form.value("through") or first, first + reading.AHEAD_PAGES - 1)
    found: list[Reading] = []
    for number in range(first, last + 1):
        data = QueryDict(mutable=True)
        data.update(form.data)
        data.pop("through", None)
        data.pop("at", None)
        data["page"] = str(number)
        each = MessageFilterForm(data)
        each.is_valid()
        made = reading_of(page, each)
        if made is None:
            return None
        if made.page != number:  # past the last page (or ``at`` named another): nothing more to add
            break
        found.append(made)
    return found


def cached(key: str | None) -> Any:
    if key is None:
        return None
    try:
        return cache.get(key)
    except Exception as exc:  # the cache is an optimisation: down, the page is rendered
        logger.warning("session page cache unavailable: %s", exc)
        return None


def keep_many(values: dict[str, Any]) -> None:
    try:
        cache.set_many(values, settings.SESSIONLEDGER_PAGE_CACHE_SECONDS)
    except Exception as exc:
        logger.warning("session layout not cached: %s", exc)


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
    reading_of(Page([session], "session-page", page_where(session), {}, lambda: (document, True)), form)

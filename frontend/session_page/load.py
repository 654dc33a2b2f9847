"""The first step of every view of a session's conversation: its content document, from the cache
or the bucket, with storage trouble mapped to a flag the page shows (never a 500)."""

from __future__ import annotations

import logging
from typing import Any

from frontend.forms import ROLE_CHOICES, MessageFilterForm
from frontend.session_page import page_cache
from sessions_app import blobs, selectors
from sessions_app.models import Session, Status

logger = logging.getLogger(__name__)


def document_load(session: Session) -> tuple[dict[str, Any] | None, bool]:
    """(document, storage unavailable); no document while processing or after a failure."""
    if session.status in (Status.PROCESSING, Status.FAILED):
        return None, False
    key = page_cache.document_key(session)  # the decoded document, kept a few minutes
    document = page_cache.cached(key)
    if document is not None:
        return document, False
    try:
        document = selectors.session_document(session=session)
        page_cache.keep(key, document, page_cache.DOCUMENT_SECONDS)
        return document, False
    except blobs.StorageUnavailable:
        logger.warning("content of session %s unavailable", session.pk, exc_info=True)
        return None, True
    except FileNotFoundError:
        logger.error("content blob of session %s is missing", session.pk)
        return None, True


def filter_params(form: MessageFilterForm) -> dict[str, Any]:
    """The active message filters as query parameters (for page and turn links)."""
    params: dict[str, Any] = {}
    if set(form.roles) != {value for value, _ in ROLE_CHOICES}:
        params["role"] = form.roles
    for name in ("since", "until"):
        if form.value(name):
            params[name] = form.local_value(name)
    if form.value("q"):
        params["q"] = form.value("q")
    return params

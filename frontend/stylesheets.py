"""The stylesheets of the reading pages (the session page and the whole conversation), in their head
rather than linked (docs/ui.md, "Stylesheets in the page").

A linked stylesheet holds the first paint until a second request to the same server has come back;
under load that request waits behind the page's own (bench/bench_browser_pages.py measured it at up
to 170 ms after the page's last byte). In the page, the first paint needs the page alone. The CSP
still allows no other inline style: the page's response names this text's SHA-256 (``csp_update``), so the
browser applies this text and nothing else — a ``<style>`` a transcript could smuggle in has another
digest. The text is read once per process, when the digest is computed, so the two always agree.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from csp.decorators import csp_update
from markupsafe import Markup

FOLDER = Path(__file__).parent / "static" / "frontend"
FILES = ("app.css", "pygments.css")  # the order of base.html's links


@cache
def text() -> str:
    """The stylesheets as one text (our own files: no ``</`` that could close the element)."""
    joined = "\n".join((FOLDER / name).read_text(encoding="utf-8") for name in FILES)
    if "</" in joined:
        raise ValueError("a stylesheet holds '</', which would end its <style> element")
    return joined


def element() -> Markup:
    return Markup(f"<style>{text()}</style>")  # our static files, checked by text()


def source() -> str:
    """The CSP source that allows exactly ``text()`` as a ``<style>`` element's content."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text().encode()).digest()).decode() + "'"


def allowed() -> Callable[[Any], Any]:
    """A view decorator: the response's CSP allows the inline stylesheets."""
    return csp_update({"style-src": [source()]})

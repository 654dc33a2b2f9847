"""Template helpers of the UI: inline SVG icons, compact times and sizes, query strings."""

from __future__ import annotations

from typing import Any

from django import template
from markupsafe import Markup

from frontend import format as fmt
from frontend import stylesheets
from frontend.templating import macros
from projects import selectors as project_selectors
from sessions_app.selectors import HEADLINE_START, HEADLINE_STOP, matching_sentence

register = template.Library()


@register.simple_tag
def inline_stylesheets() -> Markup:
    """The stylesheets in the page, for a view whose CSP allows them (``frontend.stylesheets``)."""
    return stylesheets.element()


@register.simple_tag
def icon(name: str, label: str = "") -> Markup:
    return fmt.icon(name, label)


for _name in ("clock", "stamp", "iso", "local_input", "short_number", "tokens", "usage_title", "local_part"):
    register.filter(_name, getattr(fmt, _name))


@register.filter
def snippet(value: Any) -> Markup:
    """A ``ts_headline`` snippet cut to the matching sentence: transcript text with its match
    markers as ``<mark>`` (text escaped)."""
    return macros("frontend/snippet.html").snippet(_snippet_parts(matching_sentence(str(value or ""))))


def _snippet_parts(text: str) -> list[tuple[str, bool]]:
    """Text and matched pieces, by a linear scan; a stray marker is dropped."""
    parts: list[tuple[str, bool]] = []
    start = 0
    while (open_at := text.find(HEADLINE_START, start)) >= 0:
        close_at = text.find(HEADLINE_STOP, open_at)
        if close_at < 0:
            break
        parts += [(_unmarked(text[start:open_at]), False), (_unmarked(text[open_at:close_at]), True)]
        start = close_at + 1
    parts.append((_unmarked(text[start:]), False))
    return parts


def _unmarked(text: str) -> str:
    return text.replace(HEADLINE_START, "").replace(HEADLINE_STOP, "")


@register.filter
def squash(value: Any) -> str:
    """Whitespace collapsed to single spaces (titles assembled from indented blocks)."""
    return " ".join(str(value or "").split())


@register.filter
def first_line(value: Any) -> str:
    return next((line.strip() for line in str(value or "").splitlines() if line.strip()), "")


@register.filter
def after_first_line(value: Any) -> str:
    """A commit message's body: everything after its subject line."""
    lines = str(value or "").strip().splitlines()
    return "\n".join(lines[1:]).strip()


@register.simple_tag
def query(params: Any, **changes: Any) -> str:
    return fmt.query_string(params, **changes)


@register.simple_tag(takes_context=True)
def my_projects(context: template.Context) -> list[Any]:
    """The signed-in user's projects, for the project switcher (project pages pass them in)."""
    if context.get("switchable") is not None:
        return context["switchable"]
    user = getattr(context.get("request"), "user", None)
    if user is None or not user.is_authenticated:
        return []
    return list(project_selectors.project_list(user=user))

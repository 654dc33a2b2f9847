"""Template helpers of the UI: inline SVG icons, compact times and sizes, query strings."""

from __future__ import annotations

from html import escape
from typing import Any

from django import template
from django.utils.safestring import SafeString, mark_safe

from frontend import format as fmt
from projects import selectors as project_selectors
from sessions_app.selectors import HEADLINE_START, HEADLINE_STOP

register = template.Library()


@register.simple_tag
def icon(name: str, label: str = "") -> SafeString:
    return mark_safe(fmt.icon(name, label))


for _name in ("clock", "stamp", "iso", "local_input", "short_number", "tokens", "usage_title", "local_part"):
    register.filter(_name, getattr(fmt, _name))


@register.filter
def snippet(value: Any) -> SafeString:
    """A ``ts_headline`` snippet: escaped transcript text, then its match markers as ``<mark>``."""
    text = escape(str(value or ""), quote=False)
    return mark_safe(text.replace(HEADLINE_START, "<mark>").replace(HEADLINE_STOP, "</mark>"))


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

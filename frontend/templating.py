"""How Python writes markup: it calls the macros of a Jinja2 template in ``frontend/jinja2/``.

Python builds no HTML: renderers gather what a page shows and a template writes it, autoescaped
(``docs/security.md``: every transcript string is hostile). A macro returns ``Markup``, which a
Django template prints as is. The environment is ``frontend.jinja_environment``'s.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, cast

from django.template import engines
from django.template.backends.jinja2 import Jinja2
from django.template.loader import get_template
from jinja2 import Template
from jinja2.environment import TemplateModule
from markupsafe import Markup


class Macros(Protocol):
    """A template's macros by name (a Jinja2 ``TemplateModule``); each returns ``Markup``."""

    def __getattr__(self, name: str) -> Callable[..., Markup]: ...


_WITH_HELPERS: dict[str, tuple[Template, Any, TemplateModule]] = {}


def macros(name: str, helpers: dict[str, Any] | None = None) -> Macros:
    """The macros of template ``name`` (under ``frontend/jinja2/``), with ``helpers`` in scope.

    The module is made once per template (and helpers, a caller's constant), as Jinja2 makes its
    own: a renderer called for every block or page (``frontend.session_page.tools``,
    ``frontend.session_page.render``) pays no set-up per call. A template reloaded from disk
    (``DEBUG``) gets a new module."""
    engine = engines["jinja2"]
    assert isinstance(engine, Jinja2)
    template = engine.get_template(name).template
    if not helpers:
        return cast(Macros, template.module)
    made = _WITH_HELPERS.get(name)
    if made is None or made[0] is not template or made[1] is not helpers:
        made = _WITH_HELPERS[name] = (template, helpers, template.make_module(helpers))
    return cast(Macros, made[2])


_PAGES = Path(__file__).resolve().parent / "templates"


def compile_all() -> None:
    """Compile every template of the pages and of the markup (a new web worker, config/warmup.py):
    each engine keeps what it compiled."""
    engine = engines["jinja2"]
    assert isinstance(engine, Jinja2)
    for name in engine.env.list_templates():
        engine.env.get_template(name)
    for path in sorted(_PAGES.rglob("*.html")):
        get_template(path.relative_to(_PAGES).as_posix(), using="django")

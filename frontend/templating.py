"""How Python writes markup: it calls the macros of a Jinja2 template in ``frontend/jinja2/``.

Python builds no HTML: renderers gather what a page shows and a template writes it, autoescaped
(``docs/security.md``: every transcript string is hostile). A macro returns ``Markup``, which a
Django template prints as is. The environment is ``frontend.jinja_environment``'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, cast

from django.template import engines
from django.template.backends.jinja2 import Jinja2
from markupsafe import Markup


class Macros(Protocol):
    """A template's macros by name (a Jinja2 ``TemplateModule``); each returns ``Markup``."""

    def __getattr__(self, name: str) -> Callable[..., Markup]: ...


def macros(name: str, helpers: dict[str, Any] | None = None) -> Macros:
    """The macros of template ``name`` (under ``frontend/jinja2/``), with ``helpers`` in scope.

    Without helpers the module is Jinja2's own, made once per template: a renderer called for
    every block of a page (``frontend.tools``) pays no set-up per call."""
    engine = engines["jinja2"]
    assert isinstance(engine, Jinja2)
    template = engine.get_template(name).template
    return cast(Macros, template.make_module(helpers) if helpers else template.module)

"""The Jinja2 environment of the UI's markup (``TEMPLATES`` in config/settings.py names it).

Python builds no HTML: renderers gather what a page shows and a Jinja2 template in
``frontend/jinja2/`` writes it, autoescaped (``docs/security.md``: every transcript string is
hostile). Its macros return ``Markup``, which a Django template prints as is; ``macros`` is how
Python calls them. The formatting helpers every such template uses are its globals.
"""

from __future__ import annotations

from typing import Any

from django.template import engines
from django.template.backends.jinja2 import Jinja2
from jinja2 import Environment
from jinja2.environment import TemplateModule

from frontend import format as fmt


def environment(**options: Any) -> Environment:
    env = Environment(**options)
    env.globals.update(
        icon=fmt.icon,
        iso=fmt.iso,
        clock=fmt.clock,
        timestamp_title=fmt.stamp,
        usage_title=fmt.usage_title,
        tokens=fmt.tokens,
        short_number=fmt.short_number,
        duration=fmt.duration,
    )
    return env


def macros(name: str, helpers: dict[str, Any] | None = None) -> TemplateModule:
    """The macros of template ``name`` (under ``frontend/jinja2/``), with ``helpers`` in scope."""
    engine = engines["jinja2"]
    assert isinstance(engine, Jinja2)
    return engine.get_template(name).template.make_module(helpers)

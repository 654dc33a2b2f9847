"""The Jinja2 environment of the UI's markup (``TEMPLATES`` in config/settings.py names it).

Django's Jinja2 backend makes it with autoescape on and undefined names failing; the formatting
helpers every template in ``frontend/jinja2/`` uses are its globals. Python calls the templates'
macros through ``frontend.templating``.
"""

from __future__ import annotations

from typing import Any

from jinja2 import Environment

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

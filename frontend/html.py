"""An escaping element builder, for the renderers not yet moved to Jinja2 macros.

The UI's markup is moving to autoescaped Jinja2 templates (``frontend/templating.py``; the
session page's cards are there). Until each renderer has moved, this builder writes the rest.
Transcripts and metadata are hostile (docs/security.md), so markup is never assembled by
string formatting. Python code builds elements with ``h``; Django templates print the result
as is (a ``Markup`` has ``__html__``: never add ``|safe``)::

    from frontend.html import Markup, h, join

    h("a", {"class": ["chip", active and "on"], "href": url, "title": None}, icon("branch"), name)
    # <a class="chip on" href="/p/acme/b/main">…main</a>

    h("ul", {"class": "todos"}, (h("li", {"class": f"todo-{status}"}, text) for status, text in rows))
    h("br")                                   # void elements have no closing tag
    join([h("code", None, part) for part in parts], Markup(", "))

The rules, which make an unescaped interpolation impossible to write by accident:

- **Every ``str`` is text.** Children and attribute values are escaped, quotes included
  (``& < > " '``), whatever their origin. An attribute value is escaped even when it is a
  ``Markup`` (it is always text there).
- **Only a ``Markup`` child is inserted as is.** Three things make one: this builder, the
  Markdown renderer and Pygments (``frontend.markdown``), and ``Markup("<literal>")`` for fixed
  markup written in the code. ``tests/frontend/test_html_builder.py`` fails if any module in
  ``frontend/`` passes anything but a string literal to ``Markup()``/``mark_safe()``, writes a
  tag inside an f-string, ``%`` or ``.format`` template, or a template uses ``|safe``.
  ``Markup`` operators escape their other operand (``Markup("<b>") + name`` is safe).
- **Attributes:** ``None`` and ``False`` leave the attribute out, ``True`` writes it bare
  (``open``), numbers are written as text, and a list or tuple is joined with spaces after
  dropping falsy items (handy for ``class``). Names are code, never data: a tag or attribute
  name that is not a plain identifier raises ``ValueError``.
- **Children:** ``None``, ``False`` and ``""`` are nothing; numbers are text; lists, tuples and
  generators are flattened, so a comprehension can be passed directly.

It escapes with MarkupSafe's public ``escape`` (C speedups).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from markupsafe import Markup, escape

__all__ = ["Markup", "attributes", "h", "join", "text"]

VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"})
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]*(?::[A-Za-z][A-Za-z0-9-]*)?\Z")
_CHECKED: set[str] = set()

Child = Any  # str | Markup | int | float | None | bool | Iterable[Child]


def _markup(html: str) -> Markup:
    """Wrap builder output, already escaped piece by piece."""
    return Markup(html)


def _name(name: str) -> str:
    if name not in _CHECKED:
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"not an HTML name: {name!r}")
        _CHECKED.add(name)
    return name


def text(value: Any) -> Markup:
    """``value`` as escaped text (``None`` is empty); a ``Markup`` stays as it is."""
    return _markup("") if value is None else escape(value)


def _attribute_value(value: Any) -> str:
    kind = type(value)
    if kind is str:
        return escape(value)
    if kind is list or kind is tuple:
        return escape(" ".join(str(item) for item in value if item))
    return escape(str(value))


def _start_tag(tag: str, attrs: Mapping[str, Any] | None) -> list[str]:
    if tag not in _CHECKED:
        _name(tag)
    if not attrs:
        return ["<", tag, ">"]
    out = ["<", tag]
    for name, value in attrs.items():
        if value is None or value is False:
            continue
        if name not in _CHECKED:
            _name(name)
        if value is True:
            out += (" ", name)
        else:
            out += (" ", name, '="', _attribute_value(value), '"')
    out.append(">")
    return out


def attributes(attrs: Mapping[str, Any] | None) -> str:
    """The attributes of a start tag, each value escaped (see the module docstring)."""
    return "".join(_start_tag("x", attrs)[2:-1])


def _children(children: Iterable[Child], out: list[str]) -> None:
    for child in children:
        kind = type(child)
        if kind is str:
            if child:
                out.append(escape(child))
        elif kind is Markup:
            out.append(child)
        elif child is None or kind is bool:
            continue
        elif kind is int or kind is float:
            out.append(str(child))
        elif hasattr(child, "__html__"):
            out.append(child.__html__())
        elif isinstance(child, str):
            out.append(escape(child))
        else:
            _children(child, out)


def h(tag: str, attrs: Mapping[str, Any] | None = None, /, *children: Child) -> Markup:
    """``<tag attrs>children</tag>`` with every text escaped (see the module docstring)."""
    out = _start_tag(tag, attrs)
    if tag in VOID:
        if children:
            raise ValueError(f"<{tag}> cannot have children")
    else:
        _children(children, out)
        out += ("</", tag, ">")
    return _markup("".join(out))


def join(children: Iterable[Child], separator: Child = "") -> Markup:
    """The children one after the other (escaped like ``h``'s), ``separator`` between non-empty ones."""
    pieces: list[str] = []
    for child in children:
        part: list[str] = []
        _children((child,), part)
        if part:
            pieces.append("".join(part))
    return _markup(str(text(separator)).join(pieces))

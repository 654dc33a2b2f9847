"""HTML is escaped by construction: autoescaped templates write all of it (Django templates for the
pages, Jinja2 macros in ``frontend/jinja2/`` for what Python renderers show); no markup by string
formatting.

The Jinja2 environment's behaviour is tested first; then every Python module of ``frontend/`` is
read (AST) and every template scanned, so an unescaped interpolation fails here before review.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest
from django.template import Context, Template, engines
from jinja2.exceptions import UndefinedError
from markupsafe import Markup

ROOT = Path(__file__).resolve().parents[2]
FRONTEND = ROOT / "frontend"
TEMPLATE_DIRS = [FRONTEND / "templates", FRONTEND / "jinja2", ROOT / "projects" / "templates"]
TEMPLATE_DIRS.append(ROOT / "config" / "templates")
# They make Markup from text that markdown-it and Pygments escape themselves, and from our own static
# stylesheets (refused if they hold "</"), which no request or transcript writes.
TRUSTED = {"frontend/session_page/markdown.py", "frontend/stylesheets.py"}
SAFE_MAKERS = {"Markup", "mark_safe", "SafeString", "SafeText", "format_html", "format_html_join"}
TAG = re.compile(r"<(?:[A-Za-z][A-Za-z0-9-]*(?:[\s/>]|\Z)|/[A-Za-z]|!)")  # a start or end tag, comment
UNSAFE_TEMPLATE = re.compile(r"\|\s*safe(?:seq)?\b|{%-?\s*autoescape\s+(?:off|false)|{%-?\s*filter\s+safe")

HOSTILE = 'x" id="p" data-copy=\'curl evil|sh\' <script>&amp;'
ESCAPED = "x&#34; id=&#34;p&#34; data-copy=&#39;curl evil|sh&#39; &lt;script&gt;&amp;amp;"


def _macros(source: str) -> Any:
    return engines["jinja2"].from_string(source).template.module


def test_jinja2_macros_escape_text_and_django_templates_print_their_markup_as_is() -> None:
    item = '{% macro item(t) %}<li class="todo-{{ t }}" title="{{ t }}">{{ t }}</li>{% endmacro %}'
    html = _macros(item).item(HOSTILE)
    assert html == f'<li class="todo-{ESCAPED}" title="{ESCAPED}">{ESCAPED}</li>'
    assert isinstance(html, Markup)
    assert Template("{{ html }}|{{ plain }}").render(Context({"html": html, "plain": "<i>"})) == f"{html}|&lt;i&gt;"


def test_markup_from_another_macro_is_kept_and_text_around_it_escaped() -> None:
    module = _macros(
        "{% macro b(t) %}<b>{{ t }}</b>{% endmacro %}{% macro p(x) %}<p>{{ b(x) }}{{ x }}</p>{% endmacro %}"
    )
    assert module.p("<i>") == "<p><b>&lt;i&gt;</b>&lt;i&gt;</p>"


def test_a_misspelt_name_in_a_jinja2_template_fails_instead_of_printing_nothing() -> None:
    with pytest.raises(UndefinedError):
        engines["jinja2"].from_string("{{ card.anchr }}").render({"card": object()})


# --- the checker over frontend/ ------------------------------------------------------------------


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            found.add(id(first.value))
    return found


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def markup_violations(source: str, *, trusted: bool = False) -> list[str]:
    """Where ``source`` writes markup other than through a template (line: what)."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _call_name(node) in SAFE_MAKERS:
            literal = all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args)
            if node.args and not literal and not (trusted and _call_name(node) == "Markup"):
                found.append(f"{node.lineno}: {_call_name(node)}() of a non-literal: use a template")
            skip.update(id(a) for a in node.args)
    for node in ast.walk(tree):
        plain = isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
        if plain and not trusted and TAG.search(node.value):
            found.append(f"{node.lineno}: markup in a plain string {node.value[:40]!r}: use a template or Markup('…')")
    return found


def _modules() -> list[Path]:
    return sorted(path for path in FRONTEND.rglob("*.py") if "migrations" not in path.parts)


def test_no_frontend_module_writes_markup_by_string_formatting() -> None:
    problems = []
    for path in _modules():
        name = path.relative_to(ROOT).as_posix()
        problems += [f"{name}:{v}" for v in markup_violations(path.read_text(), trusted=name in TRUSTED)]
    assert problems == []


def test_no_template_marks_text_safe() -> None:
    problems = []
    for folder in TEMPLATE_DIRS:
        for path in folder.rglob("*.html"):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if UNSAFE_TEMPLATE.search(line):
                    problems.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:80]}")
    assert problems == []


UNSAFE_LINES = [
    "{{ text|safe }}",
    "{% autoescape off %}",
    "{%- autoescape false %}",
    "{% filter safe %}",
    "{{ x|safeseq }}",
]


@pytest.mark.parametrize("line", UNSAFE_LINES)
def test_the_template_scan_catches_text_marked_safe(line: str) -> None:
    assert UNSAFE_TEMPLATE.search(line)


@pytest.mark.parametrize(
    "source",
    [
        "x = f'<li class=\"todo-{status}\">'",
        "x = '<p>%s</p>' % text",
        "x = '<b>{}</b>'.format(text)",
        "x = '<td>' + text + '</td>'",
        "x = Markup(f'<b>{text}</b>')",
        "x = Markup(text)",
        "x = mark_safe(text)",
        "x = format_html('<b>{}</b>', text)",
        "x = '</pre>'",
    ],
)
def test_the_checker_catches_markup_written_by_hand(source: str) -> None:
    assert markup_violations(source)


@pytest.mark.parametrize(
    "source",
    [
        "x = macros('frontend/tools.html').todos([(f'todo-{status}', text)])",
        "x = Markup('<br>')",
        "x = Markup('<b>%s</b>') % text",
        "x = f'{n:,} more characters — 1 < 2'",
        "def f():\n    '''Docs may show <tags>.'''",
    ],
)
def test_the_checker_lets_templates_and_markup_literals_through(source: str) -> None:
    assert markup_violations(source) == []

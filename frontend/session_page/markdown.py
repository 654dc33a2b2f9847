"""Transcript text → safe HTML: Markdown without raw HTML, vetted links, Pygments highlighting.

Everything in a transcript is untrusted (a prompt can contain ``<script>``, a tool result can
contain a crafted link). The renderer therefore never passes HTML through (``html=False``),
accepts only http/https/mailto link targets (anything else stays visible as text), never loads
images (they become links), and marks every link ``nofollow noopener noreferrer``. The CSP
forbids inline script as a second line of defence.

Besides the templates, this module is the one producer of ``Markup``: what markdown-it and
Pygments return is trusted because both escape every text they emit.

Cost is bounded as well as safety (docs/security.md). markdown-it and the Pygments lexers
are linear but slow on hostile text (a run of ``[`` costs ~40 µs a character), so a page
renders its Markdown and highlighted code within ``render_budget()``: once the page has spent
``PAGE_RENDER_BUDGET``, further texts are shown as plain preformatted text. Only lexers of
``LANGUAGES`` are ever run: a transcript picks the lexer (a fence's info string, a file name),
and the long tail of Pygments' lexers is not something we can vouch for.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from html import unescape
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import Markup, escape
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.util import ClassNotFound

SAFE_SCHEMES = ("http:", "https:", "mailto:")
LINK_REL = "nofollow noopener noreferrer"
HIGHLIGHT_LIMIT = 100_000  # characters; beyond this a code block is shown plain (Pygments is slow)
MARKDOWN_LIMIT = 60_000  # characters; beyond this text is shown as preformatted plain text
# Rendering cost in units of ~one plain character through markdown-it (a few µs): a page spends
# at most PAGE_RENDER_BUDGET (~1 s however hostile its text; a normal page uses a few percent).
PAGE_RENDER_BUDGET = 300_000
LABEL_WEIGHT = 20  # "[" and "!": markdown-it scans ahead for a label's end (~50 µs each in a run)
MARK_WEIGHT = 5  # other Markdown punctuation: emphasis delimiters, escapes, entities, code spans
HIGHLIGHT_WEIGHT = 3  # a character through a Pygments lexer
_CONTROL = re.compile(r"[\x00-\x20\x7f]+")
_FORMATTER = HtmlFormatter(nowrap=True)
# Lexers run on transcript text: mainstream ones only, each in bench/bench_pathological.py.
LANGUAGES = frozenset(
    {
        "bash", "c", "cpp", "csharp", "css", "diff", "docker", "go", "html", "ini", "java", "javascript",
        "json", "kotlin", "make", "markdown", "php", "python", "ruby", "rust", "scss", "sql", "swift",
        "toml", "typescript", "xml", "yaml", "console", "pycon", "lua", "tsx", "jsx", "text",
    }
)  # fmt: skip


@dataclass
class _Budget:
    left: int


_BUDGET: ContextVar[_Budget | None] = ContextVar("render_budget", default=None)


@contextmanager
def render_budget(cost: int = PAGE_RENDER_BUDGET) -> Iterator[None]:
    """Bound the Markdown and highlighting done inside (one page): beyond ``cost``, plain text."""
    token = _BUDGET.set(_Budget(cost))
    try:
        yield
    finally:
        _BUDGET.reset(token)


def afford(cost: int) -> bool:
    """Charge ``cost`` to the current page's budget; False (nothing charged) when it does not fit."""
    budget = _BUDGET.get()
    if budget is None:
        return True
    if cost > budget.left:
        return False
    budget.left -= cost
    return True


def _markdown_cost(text: str) -> int:
    """What markdown-it will cost, from character counts (C speed): see bench/bench_pathological.py."""
    labels = text.count("[") + text.count("!")
    marks = sum(text.count(char) for char in "]*_\\&<`")
    return len(text) + LABEL_WEIGHT * labels + MARK_WEIGHT * marks


def plain_block(text: str) -> Markup:
    """Preformatted, escaped text: what a text too long or too costly to render becomes."""
    return Markup('<pre class="plain" tabindex="0">') + text + Markup("</pre>")


def link_is_safe(url: str) -> bool:
    """Only absolute http(s) and mailto targets; control characters cannot smuggle a scheme."""
    return _CONTROL.sub("", url).lower().startswith(SAFE_SCHEMES)


def _allowed(lexer: Lexer | None) -> Lexer | None:
    return lexer if lexer is not None and LANGUAGES.intersection(lexer.aliases) else None


@lru_cache(maxsize=256)
def _lexer_by_name(name: str) -> Lexer | None:
    try:
        return _allowed(get_lexer_by_name(name, stripnl=False, ensurenl=False))
    except ClassNotFound:
        return None


@lru_cache(maxsize=256)
def _lexer_for_filename(filename: str) -> Lexer | None:
    try:
        return _allowed(get_lexer_for_filename(filename, stripnl=False, ensurenl=False))
    except ClassNotFound:
        return None


def warm_lexers() -> None:
    """Pygments' first lookup by file name matches every lexer's patterns, compiling each: a new web
    worker does it before its first request (config/warmup.py)."""
    _lexer_for_filename("warm.py")
    _lexer_by_name("python")


def _highlighted(code: str, language: str, filename: str) -> str | None:
    """Pygments' spans for ``code``, or None: unknown or unvetted language, too long, page budget spent."""
    lexer = _lexer_by_name(language.lower()[:40]) if language else None
    if lexer is None and filename:
        lexer = _lexer_for_filename(filename.rsplit("/", 1)[-1][-120:])
    if lexer is None or len(code) > HIGHLIGHT_LIMIT or not afford(HIGHLIGHT_WEIGHT * len(code)):
        return None
    return highlight(code, lexer, _FORMATTER)


def highlight_code(code: str, *, language: str = "", filename: str = "") -> Markup:
    """Highlighted HTML spans (no wrapper), or escaped text when not highlighted (see ``_highlighted``)."""
    spans = _highlighted(code, language, filename)
    return escape(code) if spans is None else Markup(spans)


def _fence_highlight(code: str, language: str, _attrs: str) -> str:
    """markdown-it's hook: a plain ``str`` (it concatenates), "" to let it escape the code itself."""
    return (_highlighted(code, language.split()[0], "") or "") if language.strip() else ""


def _render_link_open(self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    tokens[idx].attrSet("rel", LINK_REL)
    return self.renderToken(tokens, idx, options, env)


def _render_fence(self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    """A code block may scroll: reachable by keyboard (its arrows scroll it)."""
    return RendererHTML.fence(self, tokens, idx, options, env).replace("<pre", '<pre tabindex="0"', 1)


def _render_code_block(self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    return RendererHTML.code_block(self, tokens, idx, options, env).replace("<pre", '<pre tabindex="0"', 1)


def _render_table_open(self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    tokens[idx].attrSet("tabindex", "0")  # a wide table scrolls (.md table): reachable by keyboard
    return self.renderToken(tokens, idx, options, env)


def _render_image(self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    """Images are never fetched (no tracking pixels): a labelled link to the target instead."""
    token = tokens[idx]
    label = self.renderInlineAsText(token.children or [], options, env) or "image"
    src = str(token.attrGet("src") or "")
    return _IMAGE_LINK.format(src, LINK_REL, label)


_IMAGE_LINK = Markup('<a class="md-image" href="{}" rel="{}">[image: {}]</a>')  # format() escapes each


def _build() -> MarkdownIt:
    md = MarkdownIt(
        "commonmark",
        {"html": False, "linkify": False, "typographer": False, "breaks": True, "highlight": _fence_highlight},
    )
    md.enable(["table", "strikethrough"])
    md.validateLink = link_is_safe  # type: ignore[method-assign]
    md.add_render_rule("link_open", _render_link_open)
    md.add_render_rule("image", _render_image)
    md.add_render_rule("fence", _render_fence)
    md.add_render_rule("code_block", _render_code_block)
    md.add_render_rule("table_open", _render_table_open)
    return md


_MD = _build()


def render_markdown(text: str) -> Markup:
    """Safe HTML for a Markdown text (prompts, replies, thinking); plain when too long or too costly."""
    if len(text) > MARKDOWN_LIMIT:
        return plain_block(text)
    if _is_plain(text):
        return _plain_paragraphs(text)
    if not afford(_markdown_cost(text)):
        return plain_block(text)
    return Markup(render_memo(text) if len(text) <= MEMO_LIMIT else _MD.render(text))


MEMO_LIMIT = 4_000  # characters; short texts are most of a session and are re-read page after page


@lru_cache(maxsize=1024)
def render_memo(text: str) -> str:
    """Rendering is a pure function of the text: filtering or paging a session re-renders the same
    prompts and replies, and markdown-it costs ~0.3 ms each. Bounded: ≤1024 × ~4 KB of text."""
    return _MD.render(text)


# Text with none of these can only be paragraphs and line breaks in CommonMark; most thinking and
# many replies are like that, and skipping the parser for them keeps long sessions cheap.
_MARKUP_CHARS = re.compile(r"[\\`*_\[\]<>#|~!&=]")
_BLOCK_START = re.compile(r"^(?: {4}|\t| {0,3}[-+]| {0,3}\d{1,9}[.)](?:\s|$))", re.MULTILINE)
_BLANK_LINES = re.compile(r"\n[ \t]*\n")


def _is_plain(text: str) -> bool:
    return not _MARKUP_CHARS.search(text) and not _BLOCK_START.search(text)


_BR, _P, _P_END = Markup("<br />\n"), Markup("<p>"), Markup("</p>")


def _plain_paragraphs(text: str) -> Markup:
    """What markdown-it renders for plain text (``breaks=True``): paragraphs of ``<br />`` lines."""
    out = []
    for block in _BLANK_LINES.split(text):
        lines = [line.strip() for line in block.split("\n") if line.strip()]
        if lines:
            out.append(_P + _BR.join(lines) + _P_END)  # Markup's join and + escape the text
    return Markup("\n").join(out) + "\n" if out else Markup("")


# A one-line preview keeps the emphasis and code of its Markdown and drops the rest (a link's text
# stays, its target goes: a preview sits inside a link or a <summary>, where no link may nest).
_PREVIEW_TAGS = {"strong_open": "<strong>", "strong_close": "</strong>", "em_open": "<em>", "em_close": "</em>"}


def preview_markdown(text: str) -> Markup:
    """Safe inline HTML for a one-line preview of a Markdown text: bold, italics and code kept."""
    if not _MARKUP_CHARS.search(text) or not afford(_markdown_cost(text)):
        return escape(text)
    out: list[str] = []
    for block in _MD.parseInline(text):
        for token in block.children or []:
            if token.type in _PREVIEW_TAGS:
                out.append(_PREVIEW_TAGS[token.type])
            elif token.type == "code_inline":
                out.append(f"<code>{escape(token.content)}</code>")
            elif token.type in ("softbreak", "hardbreak"):
                out.append(" ")
            elif token.type in ("text", "html_inline") or token.type == "image":
                out.append(str(escape(token.content)))
    return Markup("".join(out))


def render_plain(text: str) -> Markup:
    return escape(text)


def _split_tags(html: str) -> list[str]:
    """``[text, tag, text, tag, …, text]``: our HTML has no ``<`` outside tags (text is escaped)."""
    parts, start = [], 0
    while (open_at := html.find("<", start)) >= 0:
        close_at = html.find(">", open_at)
        if close_at < 0:
            break
        parts += [html[start:open_at], html[open_at : close_at + 1]]
        start = close_at + 1
    parts.append(html[start:])
    return parts


def _fold(text: str) -> str:
    """Lower case with every character kept in place (``"İ".lower()`` is two characters)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(low if len(low := char.lower()) == 1 else char for char in text)


def mark_matches(html: Markup, needle: str) -> Markup:
    """Wrap case-insensitive occurrences of ``needle`` in ``<mark>``, in text nodes only.

    Works on already-safe HTML: tags are left alone and each text node is unescaped, marked and
    escaped again, so the needle can neither break markup or entities nor introduce any. Linear:
    ``str.find`` on case-folded text, never a regex built from the needle.
    """
    folded = _fold(needle)
    if not needle.strip() or folded not in _fold(unescape(html)):  # most texts of a page: no match at all
        return html
    parts = _split_tags(html)
    for i in range(0, len(parts), 2):  # even positions are the text between tags
        parts[i] = _mark_text(parts[i], folded)
    return Markup("".join(parts))


_MARK = Markup("<mark>")
_UNMARK = Markup("</mark>")


def _mark_text(fragment: str, needle: str) -> str:
    text = unescape(fragment)
    folded = _fold(text)
    at = folded.find(needle)
    if at < 0:
        return fragment
    out, start = [], 0
    while at >= 0:
        end = at + len(needle)
        out += [escape(text[start:at]), _MARK, escape(text[at:end]), _UNMARK]
        start = end
        at = folded.find(needle, start)
    out.append(escape(text[start:]))
    return "".join(out)


def pygments_css(style: str = "friendly", selectors: Any = (".md pre", ".hl")) -> str:
    """The stylesheet for highlighted code (used to generate static/frontend/pygments.css)."""
    return HtmlFormatter(style=style).get_style_defs(list(selectors))

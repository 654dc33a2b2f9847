"""Transcript text → safe HTML: Markdown without raw HTML, vetted links, Pygments highlighting.

Everything in a transcript is untrusted (a prompt can contain ``<script>``, a tool result can
contain a crafted link). The renderer therefore never passes HTML through (``html=False``),
accepts only http/https/mailto link targets (anything else stays visible as text), never loads
images (they become links), and marks every link ``nofollow noopener noreferrer``. The CSP
forbids inline script as a second line of defence.
"""

from __future__ import annotations

import re
from functools import lru_cache
from html import escape, unescape
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.util import ClassNotFound

SAFE_SCHEMES = ("http:", "https:", "mailto:")
LINK_REL = "nofollow noopener noreferrer"
HIGHLIGHT_LIMIT = 100_000  # characters; beyond this a code block is shown plain (Pygments is slow)
MARKDOWN_LIMIT = 60_000  # characters; beyond this text is shown as preformatted plain text
_CONTROL = re.compile(r"[\x00-\x20\x7f]+")
_FORMATTER = HtmlFormatter(nowrap=True)


def link_is_safe(url: str) -> bool:
    """Only absolute http(s) and mailto targets; control characters cannot smuggle a scheme."""
    return _CONTROL.sub("", url).lower().startswith(SAFE_SCHEMES)


@lru_cache(maxsize=256)
def _lexer_by_name(name: str) -> Lexer | None:
    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


@lru_cache(maxsize=256)
def _lexer_for_filename(filename: str) -> Lexer | None:
    try:
        return get_lexer_for_filename(filename, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def highlight_code(code: str, *, language: str = "", filename: str = "") -> str:
    """Highlighted HTML spans (no wrapper) or escaped text when the language is unknown or the code huge."""
    lexer = _lexer_by_name(language.lower()) if language else None
    if lexer is None and filename:
        lexer = _lexer_for_filename(filename.rsplit("/", 1)[-1])
    if lexer is None or len(code) > HIGHLIGHT_LIMIT:
        return escape(code, quote=False)
    return highlight(code, lexer, _FORMATTER)


def _fence_highlight(code: str, language: str, _attrs: str) -> str:
    return highlight_code(code, language=language.split()[0] if language else "") if language else ""


def _render_link_open(self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    tokens[idx].attrSet("rel", LINK_REL)
    return self.renderToken(tokens, idx, options, env)


def _render_image(self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    """Images are never fetched (no tracking pixels): a labelled link to the target instead."""
    token = tokens[idx]
    label = escape(self.renderInlineAsText(token.children or [], options, env) or "image")
    src = escape(str(token.attrGet("src") or ""))
    return f'<a class="md-image" href="{src}" rel="{LINK_REL}">[image: {label}]</a>'


def _build() -> MarkdownIt:
    md = MarkdownIt(
        "commonmark",
        {"html": False, "linkify": False, "typographer": False, "breaks": True, "highlight": _fence_highlight},
    )
    md.enable(["table", "strikethrough"])
    md.validateLink = link_is_safe  # type: ignore[method-assign]
    md.add_render_rule("link_open", _render_link_open)
    md.add_render_rule("image", _render_image)
    return md


_MD = _build()


def render_markdown(text: str) -> str:
    """Safe HTML for a Markdown text (prompts, replies, thinking)."""
    if len(text) > MARKDOWN_LIMIT:
        return f"<pre class='plain'>{escape(text, quote=False)}</pre>"
    if _is_plain(text):
        return _plain_paragraphs(text)
    return _render_memo(text) if len(text) <= MEMO_LIMIT else _MD.render(text)


MEMO_LIMIT = 4_000  # characters; short texts are most of a session and are re-read page after page


@lru_cache(maxsize=1024)
def _render_memo(text: str) -> str:
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


def _plain_paragraphs(text: str) -> str:
    """What markdown-it renders for plain text (``breaks=True``): paragraphs of ``<br />`` lines."""
    out = []
    for block in _BLANK_LINES.split(text):
        lines = [line.strip() for line in block.split("\n") if line.strip()]
        if lines:
            out.append("<p>" + "<br />\n".join(lines).replace('"', "&quot;") + "</p>\n")
    return "".join(out)


def render_plain(text: str) -> str:
    return escape(text, quote=False)


_TAG_SPLIT = re.compile(r"(<[^>]*>)")


def mark_matches(html: str, needle: str) -> str:
    """Wrap case-insensitive occurrences of ``needle`` in ``<mark>``, in text nodes only.

    Works on already-safe HTML: tags are left alone and each text node is unescaped, marked and
    escaped again, so the needle can neither break markup or entities nor introduce any.
    """
    if not needle.strip():
        return html
    pattern = re.compile(re.escape(needle), re.IGNORECASE)
    parts = _TAG_SPLIT.split(html)
    for i in range(0, len(parts), 2):  # even positions are the text between tags
        parts[i] = _mark_text(parts[i], pattern)
    return "".join(parts)


def _mark_text(fragment: str, pattern: re.Pattern[str]) -> str:
    text = unescape(fragment)
    if not pattern.search(text):
        return fragment
    pieces = pattern.split(text)
    found = pattern.findall(text)
    out = [escape(pieces[0], quote=False)]
    for match, after in zip(found, pieces[1:], strict=True):
        out.append(f"<mark>{escape(match, quote=False)}</mark>{escape(after, quote=False)}")
    return "".join(out)


def pygments_css(style: str = "friendly", selectors: Any = (".md pre", ".hl")) -> str:
    """The stylesheet for highlighted code (used to generate static/frontend/pygments.css)."""
    return HtmlFormatter(style=style).get_style_defs(list(selectors))

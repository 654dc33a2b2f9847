"""Transcript text is untrusted: the renderer must never let it become markup or a live link."""

from __future__ import annotations

from functools import partial
from html.parser import HTMLParser

import pytest

from frontend.session_page.markdown import (
    highlight_code,
    link_is_safe,
    mark_matches,
    render_budget,
    render_markdown,
    render_plain,
)
from tests.frontend.conftest import XSS_PAYLOADS
from tests.work import assert_linear


class Elements(HTMLParser):
    """Every element and attribute a browser would build from the HTML."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None]]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, dict(attrs)))


SAFE_TAGS = {
    "p",
    "a",
    "br",
    "code",
    "pre",
    "em",
    "strong",
    "span",
    "ul",
    "ol",
    "li",
    "blockquote",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "s",
}


@pytest.mark.parametrize("payload", XSS_PAYLOADS)
def test_hostile_text_builds_no_active_element_attribute_or_link(payload: str) -> None:
    for tag, attrs in Elements(render_markdown(payload)).found:
        assert tag in SAFE_TAGS
        assert not [name for name in attrs if name.startswith("on") or name in ("src", "style")]
        assert link_is_safe(attrs.get("href") or "https:")


def test_raw_html_is_shown_as_text() -> None:
    assert render_markdown("<b>bold</b>") == "<p>&lt;b&gt;bold&lt;/b&gt;</p>\n"


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JAVASCRIPT:alert(1)",
        "java\tscript:alert(1)",
        " javascript:alert(1)",
        "vbscript:x",
        "data:text/html,x",
        "file:///etc/passwd",
        "/relative/path",
        "//evil.example/x",
        "#anchor",
    ],
)
def test_only_http_https_and_mailto_links_are_allowed(url: str) -> None:
    assert not link_is_safe(url)
    assert "<a" not in render_markdown(f"[x]({url})")


@pytest.mark.parametrize("url", ["https://example.com/a?b=1", "http://example.com", "mailto:dev@example.com"])
def test_safe_links_open_without_referrer_or_opener(url: str) -> None:
    html = render_markdown(f"[x]({url})")
    assert 'rel="nofollow noopener noreferrer"' in html and "<a href=" in html


def test_entity_encoded_scheme_stays_text() -> None:
    html = render_markdown("[x](&#106;avascript:alert(1))")
    assert "<a" not in html and "javascript:alert(1)" in html


def test_images_are_never_loaded_but_linked() -> None:
    html = render_markdown("![diagram](https://example.com/d.png)")
    assert "<img" not in html
    assert '<a class="md-image" href="https://example.com/d.png" rel="nofollow noopener noreferrer">' in html


def test_link_title_cannot_break_out_of_the_attribute() -> None:
    html = render_markdown('[x](https://a.example "t\\" onmouseover=\\"alert(1)")')
    assert 'onmouseover="alert' not in html


def test_fenced_code_is_highlighted_and_escaped() -> None:
    html = render_markdown("```python\ndef f():\n    return '<b>'\n```")
    assert '<span class="k">def</span>' in html and "&lt;b&gt;" in html and "<b>" not in html


def test_unknown_language_code_is_escaped_plain_text() -> None:
    html = render_markdown("```nosuchlang\n<script>x</script>\n```")
    assert "&lt;script&gt;" in html and "<script>" not in html


def test_search_marks_touch_text_only() -> None:
    html = '<p>Find <a href="https://find.example">find</a> &lt;find&gt;</p>'
    marked = mark_matches(html, "find")
    assert marked == (
        '<p><mark>Find</mark> <a href="https://find.example"><mark>find</mark></a> &lt;<mark>find</mark>&gt;</p>'
    )


def test_search_marks_cannot_inject_markup_or_split_entities() -> None:
    assert mark_matches("<p>a &lt;b&gt; lt</p>", "<b>") == "<p>a <mark>&lt;b&gt;</mark> lt</p>"
    assert mark_matches("<p>a &lt;b&gt; lt</p>", "lt") == "<p>a &lt;b&gt; <mark>lt</mark></p>"


def test_search_marks_keep_their_place_after_a_letter_whose_lower_case_is_longer() -> None:
    assert mark_matches("<p>İstanbul and find</p>", "FIND") == "<p>İstanbul and <mark>find</mark></p>"
    assert mark_matches("<p>İİ x</p>", "i̇") == "<p>İİ x</p>"  # no match, and no shifted slice either


def test_a_worst_case_search_needle_is_matched_in_linear_time() -> None:
    # Many matches, in text whose lower case is longer: the lines run and C calls made grow ~2x for 2x.
    assert_linear(lambda n: partial(mark_matches, render_plain("İa <b> " * n), "A"), 500, c_calls=True)
    # No match: one `in` on the whole text (C), where a regex needle compared ~200 characters a position.
    html = render_plain("a" * 200_000)
    assert mark_matches(html, "a" * 199 + "b") == html
    assert mark_matches(render_plain("İa <b> "), "A") == "İ<mark>a</mark> &lt;b&gt; "


def test_a_page_renders_rich_text_within_its_budget_then_plain_text() -> None:
    brackets = "[" * 20_000  # slow for markdown-it: the budget cuts it
    with render_budget(500_000):
        first, second = render_markdown(brackets + "a"), render_markdown(brackets + "b")
    assert first.startswith("<p>") and second.startswith('<pre class="plain" tabindex="0">')
    assert render_markdown(brackets + "c").startswith("<p>")  # outside a page: no budget


def test_code_is_highlighted_only_by_vetted_lexers() -> None:
    assert "<span" in highlight_code("x = 1", language="python")
    assert "<span" not in highlight_code("x = 1", language="befunge")  # Pygments has it; we do not run it
    assert highlight_code("<b>", filename="a.bf") == "&lt;b&gt;"

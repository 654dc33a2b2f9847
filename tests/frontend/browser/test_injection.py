"""Hostile text in every field, rendered in Chromium: nothing may leave the text it belongs to.

For each string field of the content document (declared in sessionledger.core.formats.document)
and each text or JSON column of a session (tests/frontend/injection.py), one session holds the
whole payload corpus in that field and a twin session holds the same text with every non-space
character turned into ``x``. Both pages are opened (all their pages loaded, as a reader
scrolling would) and must have the same elements and attribute names, outside Markdown and
highlighted code, whose output is vetted against an allowlist instead. While a hostile page is
open nothing may navigate, open a dialog, or request anything from another origin.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Error as PlaywrightError

from tests.frontend.browser.conftest import log_in
from tests.frontend.injection import document_variants, metadata_fields, metadata_variants, stored_copy
from tests.frontend.injection import template_transcript as template

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The structure of the page, outside rich text; and what rich text (Markdown, Pygments) may contain.
READ_PAGE = """(doc) => {
  const document = doc || window.document;
  const RICH = ".md, pre.hl";
  const TAGS = new Set(["p", "br", "a", "code", "pre", "em", "strong", "span", "ul", "ol", "li", "blockquote", "hr",
    "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td", "s", "del", "mark"]);
  const ATTRIBUTES = new Set(["href", "rel", "class", "title", "start", "style", "tabindex"]);
  const URL = /^(https?:|mailto:|\\/(?!\\/)|\\?|#)/i;
  const skeleton = [], problems = [];
  const vet = (root) => {
    for (const el of root.querySelectorAll("*")) {
      const tag = el.tagName.toLowerCase();
      if (!TAGS.has(tag)) problems.push(`<${tag}> in rich text`);
      for (const name of el.getAttributeNames()) {
        const value = el.getAttribute(name);
        if (!ATTRIBUTES.has(name)) problems.push(`${name}= on <${tag}> in rich text`);
        if (name === "style" && !/^text-align:(left|right|center)$/.test(value)) problems.push(`style="${value}"`);
        if (name === "tabindex" && !(tag === "pre" || tag === "table") || name === "tabindex" && value !== "0") {
          problems.push(`tabindex="${value}" on <${tag}>`);  // ours, on a block that may scroll
        }
      }
    }
  };
  const visit = (el, depth) => {
    for (const child of el.children) {
      const names = child.getAttributeNames().filter((n) => n !== "aria-busy").sort();
      skeleton.push(`${"  ".repeat(depth)}<${child.tagName.toLowerCase()} ${names.join(" ")}>`);
      if (child.matches(RICH)) { vet(child); } else { visit(child, depth + 1); }
    }
  };
  visit(document.documentElement, 0);
  for (const el of document.querySelectorAll("[href],[src],[action],[formaction],[srcdoc],[http-equiv]")) {
    for (const name of ["href", "src", "action", "formaction", "srcdoc", "http-equiv"]) {
      const value = el.getAttribute(name);
      if (value !== null && (name === "srcdoc" || name === "http-equiv" || !URL.test(value.trim()))) {
        problems.push(`${name}="${value.slice(0, 60)}" on <${el.tagName.toLowerCase()}>`);
      }
    }
  }
  const scripts = Array.from(document.scripts).map((s) => s.getAttribute("src"));
  if (scripts.join() !== "/static/frontend/app.js") problems.push(`scripts: ${scripts.join()}`);
  return { skeleton, problems, url: location.href };
}"""

# The twin's page, as app.js would assemble it (later pages' cards appended), parsed without running it.
READ_TWIN = """async (path) => {
  const read = READ_PAGE;
  const parse = async (url) => new DOMParser().parseFromString(await (await fetch(url)).text(), "text/html");
  const doc = await parse(path);
  for (let more = doc.querySelector("#more [data-more]"); more; more = doc.querySelector("#more [data-more]")) {
    const next = await parse(new URL(more.getAttribute("href"), new URL(path, location.origin)).href);
    if (!next.getElementById("cards")) { return [`(${more.getAttribute("href")} did not render)`]; }
    doc.getElementById("cards").append(...next.getElementById("cards").children);
    const nav = next.getElementById("more");
    if (nav) { doc.getElementById("more").replaceWith(nav); } else { doc.getElementById("more").remove(); }
  }
  return read(doc).skeleton;
}""".replace("READ_PAGE", READ_PAGE)

ACTIVATE_MORE = """() => {
  const link = document.querySelector("#more [data-more]");
  if (!link) { return null; }
  link.click();
  return link.getAttribute("href");
}"""

LOADED_PAST = """(href) => {
  const link = document.querySelector("#more [data-more]");
  return !link || link.getAttribute("href") !== href;
}"""


class Watch:
    """Navigations of the main frame and requests to other origins while a page is open."""

    def __init__(self, page: Any, origin: str) -> None:
        self.page, self.origin = page, origin
        self.reader = page.context.new_page()  # fetches twins; stays put whatever a hostile page does
        self.reader.goto("/static/frontend/app.css")
        # The page under test in front: Chromium runs a background tab's timers and animation frames once
        # a second, which Playwright's clicks and waits poll on (a second or two per later page).
        page.bring_to_front()
        self.navigations: list[str] = []
        self.foreign: list[str] = []
        page.on("framenavigated", lambda frame: frame == page.main_frame and self.navigations.append(frame.url))
        page.route("**/*", self._route)

    def _route(self, route: Any) -> None:
        if route.request.url.startswith(self.origin):
            route.continue_()
        else:
            self.foreign.append(route.request.url)
            route.abort()

    def structure(self, path: str) -> list[str]:
        """The elements of the page at ``path`` with all its pages, without opening it (a harmless twin)."""
        return self.reader.evaluate(READ_TWIN, path)

    def read(self, path: str) -> dict[str, Any]:
        """Open ``path``, load every later page as scrolling would, and read the result."""
        status = self.page.goto(path).status
        self.navigations.clear()
        try:
            self._load_all()
            seen = self.page.evaluate(READ_PAGE, None)
        except PlaywrightError as error:  # the page went away under us: that is the finding
            seen = {"skeleton": [], "problems": [f"the page broke: {str(error)[:120]}"], "url": self.page.url}
        seen["moved"] = seen["url"] != self.origin + path
        seen["status"] = status
        seen["navigations"], seen["foreign"] = list(self.navigations), list(self.foreign)
        seen["dialogs"] = list(self.page.dialogs)
        self.foreign.clear()
        self.page.dialogs.clear()
        return seen

    def _load_all(self) -> None:
        for _ in range(30):
            # Read and activate the link in one step: the script also fetches later pages on its own
            # once the first is painted, and may replace the link between two separate calls.
            href = self.page.evaluate(ACTIVATE_MORE)
            if href is None:
                break
            self.page.wait_for_function(LOADED_PAST, arg=href)
        self.page.wait_for_timeout(100)  # a meta refresh or a late handler would act by now


def _report(found: dict[str, list[str]]) -> str:
    return "\n".join(f"{field}:\n  " + "\n  ".join(problems[:6]) for field, problems in found.items())


def _differences(hostile: dict[str, Any], twin: list[str]) -> list[str]:
    problems = list(hostile["problems"])
    if hostile["status"] != 200:
        problems.append(f"the page answered {hostile['status']}")
    if hostile["moved"]:
        problems.append(f"the page is now {hostile['url']}")
    problems += [f"navigated to {url}" for url in hostile["navigations"]]
    problems += [f"requested {url}" for url in hostile["foreign"]]
    problems += [f"dialog: {message}" for message in hostile["dialogs"]]
    if hostile["skeleton"] != twin:
        pairs = zip([*hostile["skeleton"], ""], [*twin, ""], strict=False)
        at = next(i for i, (a, b) in enumerate(pairs) if a != b)
        problems.append(f"element {at}: {hostile['skeleton'][at : at + 3]}, twin {twin[at : at + 3]}")
    return problems


@pytest.fixture
def watch(page, live_server, world) -> Watch:
    log_in(page, world.viewer.email)
    return Watch(page, live_server.url)


@pytest.fixture
def template_session(world, make_session):
    raw, subagents = template()
    return make_session(world.project, world.member, raw, subagents=subagents, seed="template")


def _path(world, session) -> str:
    return f"/p/{world.project.slug}/s/{session.pk}"


def test_hostile_text_in_any_document_field_stays_text(watch, world, template_session) -> None:
    from sessions_app import blobs

    document = blobs.load_json_gz(template_session.content_storage_key)
    found: dict[str, list[str]] = {}
    for variant in document_variants(document):
        hostile = watch.read(_path(world, stored_copy(template_session, variant.payload)))
        twin = watch.structure(_path(world, stored_copy(template_session, variant.twin)))
        problems = _differences(hostile, twin)
        if problems:
            found[variant.field] = problems
    assert not found, _report(found)


def test_hostile_text_in_any_metadata_field_stays_text(watch, world, template_session) -> None:
    found: dict[str, list[str]] = {}
    for name in metadata_fields():
        payload, twin_fields = metadata_variants(name)
        hostile = watch.read(_path(world, stored_copy(template_session, **payload)))
        twin = watch.structure(_path(world, stored_copy(template_session, **twin_fields)))
        problems = _differences(hostile, twin)
        if problems:
            found[name] = problems
    assert not found, _report(found)

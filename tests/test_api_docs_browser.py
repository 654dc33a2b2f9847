"""The API documentation in a real browser: it renders, and every request it makes is to this server."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import pytest

from tests.frontend.browser.conftest import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

INGEST_PATH = "/api/v1/projects/{project}/sessions"


def _visit_the_docs(base_url: str) -> tuple[list[str], list[str]]:
    """Every request URL the page made, and its console messages.

    Runs Playwright in a thread of its own: the browser tests' session-wide Playwright may already own
    this thread's event loop, and the sync API allows one per thread.
    """
    from playwright.sync_api import sync_playwright

    requested: list[str] = []
    console: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(base_url=base_url, viewport={"width": 1360, "height": 900})
            context.set_default_timeout(15_000)
            context.on("request", lambda request: requested.append(request.url))
            page = context.new_page()
            page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
            page.goto("/api/v1/docs")
            ingest = page.locator(".opblock-post", has=page.locator(f"[data-path='{INGEST_PATH}']")).first
            ingest.wait_for()
            assert page.locator(".opblock").count() > 20  # every endpoint, not an error box
            ingest.locator(".opblock-summary").click()
            page.get_by_text("Idempotency-Key: checkpoint-").first.wait_for()
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "api-docs.png"))
        finally:
            browser.close()
    return requested, console


def test_the_api_docs_render_with_no_request_to_another_host(live_server) -> None:
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (make browser)")
    with ThreadPoolExecutor(max_workers=1) as pool:
        requested, console = pool.submit(_visit_the_docs, live_server.url).result(timeout=120)

    server = urlsplit(live_server.url).netloc
    assert requested, "the page made no request at all?"
    elsewhere = [url for url in requested if urlsplit(url).netloc != server]
    assert elsewhere == [], f"requests to other hosts: {elsewhere}"
    assert any(url.endswith("/api/v1/schema") for url in requested)
    assert any("/static/drf_spectacular_sidecar/" in url for url in requested)
    violations = [line for line in console if re.search(r"Content Security Policy|Refused to", line)]
    assert violations == [], violations

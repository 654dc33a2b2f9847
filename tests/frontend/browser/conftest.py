"""Playwright (sync API) driving Debian's Chromium against pytest-django's live server.

Playwright's sync API runs an event loop in this thread, which makes Django refuse ORM calls
from the same thread unless told that this is deliberate.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]
ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts"
PASSWORD = "pw-for-tests-1"  # tests.factories.UserFactory's


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (make browser)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server) -> Iterator[object]:
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1360, "height": 900})
    context.set_default_timeout(10_000)
    page = context.new_page()
    page.dialogs = []  # every alert/confirm the page raised; XSS tests assert it stays empty
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    yield page
    context.close()


def log_in(page, email: str, password: str = PASSWORD) -> None:
    page.goto("/accounts/login/")
    page.fill("input[name=login]", email)
    page.fill("input[name=password]", password)
    page.click("form.auth-form button[type=submit]")
    page.wait_for_url("**/")


def screenshot(page, name: str, *, full_page: bool = True) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


def axe_violations(page) -> list[str]:
    """axe-core's violations on the page as "rule-id: target, target, … (N nodes)"."""
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page).response["violations"]
    lines = []
    for violation in found:
        targets = [" ".join(map(str, node["target"])) for node in violation["nodes"]]
        lines.append(f"{violation['id']}: {', '.join(targets[:6])} ({len(targets)} nodes)")
    return lines

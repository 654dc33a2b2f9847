"""The PR page in Chromium with everything on it — shares per agent and model, the files the agent
wrote whole, two stitched conversations with their prompts, a dropped commit — has no axe violation,
and a prompt of its overview opens the whole conversation at that prompt."""

from __future__ import annotations

import pytest

from tests.frontend.browser.conftest import axe_violations, log_in, screenshot
from tests.integrations.review_story import review_story

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_full_pr_page_has_no_axe_violations_and_its_prompts_open_the_conversation(
    page, world, make_session, api_as
) -> None:
    review_story(world, make_session, api_as)
    log_in(page, world.viewer.email)

    page.goto("/p/acme-api/pr/7")
    screenshot(page, "pull-request")
    assert axe_violations(page) == []
    assert page.locator(".pr-conversation").count() == 2

    page.get_by_role("link", name="Also back off on 429").first.click()
    page.wait_for_url("**/conversation?at=*")
    target = page.locator("#cards .is-target")
    assert "Also back off on 429" in target.inner_text()

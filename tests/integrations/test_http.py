"""Calls to a forge wait as its rate limits say, and give up instead of sleeping for long."""

from __future__ import annotations

import pytest
import requests

from integrations.forges import http
from tests.integrations.fakeforge import FakeForge, running

NOW = 1_700_000_000.0


def call(forge: FakeForge, *answers: tuple[int, dict[str, str]]) -> tuple[int | None, list[float]]:
    forge.scripted = list(answers)
    waits: list[float] = []
    with requests.Session() as session:
        response = http.request(session, "GET", f"{forge.url}/scripted", sleep=waits.append, now=lambda: NOW)
    return response.status_code, waits


@pytest.fixture
def fake() -> FakeForge:
    with running(FakeForge(app_id="1", public_key="")) as forge:
        yield forge


def test_a_secondary_rate_limit_is_waited_out_as_retry_after_says(fake) -> None:
    assert call(fake, (429, {"Retry-After": "7"}), (200, {})) == (200, [7.0])


def test_a_spent_primary_rate_limit_waits_until_its_reset(fake) -> None:
    spent = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 30)}
    assert call(fake, (403, spent), (200, {})) == (200, [30.0])


def test_server_errors_back_off_and_a_forbidden_call_is_not_retried(fake) -> None:
    assert call(fake, (502, {}), (503, {}), (200, {})) == (200, [1.0, 2.0])
    with pytest.raises(http.ForgeError, match="HTTP 403"):
        call(fake, (403, {}))


def test_a_wait_beyond_a_minute_fails_the_call_without_sleeping(fake) -> None:
    spent = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 3600)}
    with pytest.raises(http.ForgeError, match="retry in 3600s"):
        call(fake, (403, spent))

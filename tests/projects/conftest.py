"""Budgets (projects/limits.py) and allauth's mail limits live in the cache, which outlives a test and a
run (user ids repeat from one test database to the next): every test here starts with full budgets."""

from __future__ import annotations

import pytest

from tests import caching


@pytest.fixture(autouse=True)
def full_budgets() -> None:
    caching.clear()

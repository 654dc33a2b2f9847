"""The CPU budget of a session's processing (sessions_app/budget.py): it stops a pathological
session, but never inside a storage call, where an exception could leave boto3's locks held."""

from __future__ import annotations

import time

import pytest

from sessions_app.budget import BudgetExceeded, cpu_budget, deferred


def _burn(seconds: float) -> None:
    started = time.process_time()
    while time.process_time() - started < seconds:
        pass


def test_a_spent_budget_stops_the_work_at_once() -> None:
    with pytest.raises(BudgetExceeded), cpu_budget(0.01):
        _burn(5)


def test_a_budget_spent_inside_a_storage_call_is_raised_when_the_call_ends() -> None:
    finished = []
    with pytest.raises(BudgetExceeded), cpu_budget(0.01):
        with deferred():
            _burn(0.2)  # the budget runs out in here…
            finished.append("storage call")
        finished.append("after the call")  # …and stops the work right after
    assert finished == ["storage call"]


def test_nothing_is_held_over_when_a_storage_call_fails_after_the_budget_ran_out() -> None:
    with pytest.raises(OSError), cpu_budget(0.01), deferred():
        _burn(0.2)  # the budget runs out in here, then the call fails on its own
        raise OSError("the bucket refused")
    with deferred():
        pass  # no stale exception from the earlier budget

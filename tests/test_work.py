"""tests/work.py counts work the same way on any machine and tells linear from quadratic."""

from __future__ import annotations

from functools import partial

import pytest

from tests.work import assert_bounded, assert_linear, work_of

HERE = (__file__,)  # count this file's toys as if they were project code


def linear(items: list[int]) -> int:
    total = 0
    for item in items:
        total += item
    return total


def quadratic(items: list[int]) -> int:
    total = 0
    for i in range(len(items)):
        for item in items[:i]:  # what a rescan from every position looks like
            total += item
    return total


def refuse_at(items: list[int], limit: int = 64) -> int:
    for i, _ in enumerate(items):
        if i >= limit:
            return -1  # refused: too many
    return len(items)


def test_the_count_is_deterministic() -> None:
    counts = {work_of(partial(linear, list(range(1000))), roots=HERE)[1].lines for _ in range(3)}
    assert counts == {2 + 2 * 1000 + 1}  # total = 0; for and += per item; the final for; return


def test_linear_work_passes_and_quadratic_work_fails() -> None:
    assert assert_linear(lambda n: partial(linear, list(range(n))), 500, roots=HERE) == (1003, 2003)
    with pytest.raises(AssertionError, match="super-linear"):
        assert_linear(lambda n: partial(quadratic, list(range(n))), 500, roots=HERE)


def test_a_refusal_at_once_passes_and_reading_everything_fails() -> None:
    assert_bounded(lambda n: partial(refuse_at, list(range(n))), 1000, roots=HERE)
    with pytest.raises(AssertionError, match="grew with the input"):
        assert_bounded(lambda n: partial(linear, list(range(n))), 1000, roots=HERE)


def test_c_calls_made_by_counted_code_are_counted() -> None:
    _, work = work_of(lambda: "".join(str(i) for i in range(3)).find("2"), roots=HERE, c_calls=True)
    assert work.c_calls["find"] == 1 and work.c_calls["join"] == 1

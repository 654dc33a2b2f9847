"""Counting work instead of timing it: machines here are noisy, so no test bounds wall-clock time.

A hang guard for a linearity fix runs the code at two input sizes and compares *work*: the Python
lines executed in the project's own modules (sys.settrace), optionally with the calls those
modules make into C (str.find, a regex, zlib; sys.setprofile), which is where a quadratic path
would spend its time. The counts are deterministic: the same input gives the same count on any
machine, however busy.

    small, large = assert_linear(lambda n: partial(parse, make(n)), 1_000)  # input built outside the count

Work that happens inside one C call (a backtracking regex, zlib) is invisible to these counts:
such paths count what our code does around the call (members opened, lines inflated, calls
made), and their full-size input's time is bench/bench_pathological.py's to watch, not a
test's (docs/scaling.md "Tests count work, not seconds").
"""

from __future__ import annotations

import os
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tuple(f"{ROOT / d}/" for d in ("config", "projects", "sessions_app", "frontend", "client/sessionledger"))


@dataclass
class Work:
    lines: int = 0  # Python lines executed in the counted modules
    c_calls: Counter[str] = field(default_factory=Counter)  # C functions they called, by name

    @property
    def total(self) -> int:
        return self.lines + sum(self.c_calls.values())


@contextmanager
def counting(*, roots: tuple[str, ...] = PROJECT, c_calls: bool = False) -> Iterator[Work]:
    """Count the work done in modules under `roots` (the project's own code by default)."""
    work = Work()

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            work.lines += 1
        return local

    def calls(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename.startswith(roots) else None

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "c_call" and frame.f_code.co_filename.startswith(roots):
            work.c_calls[getattr(arg, "__name__", "?")] += 1

    old_trace, old_profile = sys.gettrace(), sys.getprofile()
    sys.settrace(calls)
    threading.settrace(calls)
    if c_calls:
        sys.setprofile(profile)
    try:
        yield work
    finally:
        sys.settrace(old_trace)
        threading.settrace(old_trace)
        sys.setprofile(old_profile)


def work_of(run: Callable[[], Any], **options: Any) -> tuple[Any, Work]:
    with counting(**options) as work:
        result = run()
    return result, work


def assert_linear(
    build: Callable[[int], Callable[[], Any]],
    n: int,
    *,
    factor: int = 2,
    slack: float = 1.25,
    **options: Any,
) -> tuple[int, int]:
    """Work at size `factor * n` is at most `slack * factor` times the work at size `n`.

    `build(n)` prepares the input outside the count and returns the call to count. Choose `n`
    so that a quadratic path's extra work dominates its fixed costs: doubling then shows ~4x.
    """
    build(n)()  # warm-up, not counted: one-time work (imports, caches) would hide growth
    _, small = work_of(build(n), **options)
    _, large = work_of(build(factor * n), **options)
    assert small.total > 0, "nothing counted: is the code under test outside the counted modules?"
    assert large.total <= slack * factor * small.total, (
        f"work grew {large.total / small.total:.2f}x for {factor}x the input ({small.total} -> {large.total}): "
        f"super-linear; lines {small.lines} -> {large.lines}, C calls {dict(small.c_calls)} -> {dict(large.c_calls)}"
    )
    _log(f"linear {small.total} -> {large.total}")
    return small.total, large.total


def _log(text: str) -> None:
    """SESSIONLEDGER_WORK_LOG=path appends every measurement there, to compare counts by hand."""
    if path := os.environ.get("SESSIONLEDGER_WORK_LOG"):
        with open(path, "a") as log:
            log.write(f"{os.environ.get('PYTEST_CURRENT_TEST', '?')}: {text}\n")


def assert_bounded(build: Callable[[int], Callable[[], Any]], n: int, *, factor: int = 2, **options: Any) -> int:
    """The work does not grow with the input at all (a refusal made at once): same count at n and factor*n."""
    build(n)()  # warm-up, not counted
    _, small = work_of(build(n), **options)
    _, large = work_of(build(factor * n), **options)
    assert small.total > 0, "nothing counted: is the code under test outside the counted modules?"
    assert large.total <= small.total * 1.05 + 50, f"work grew with the input: {small.total} -> {large.total}"
    _log(f"bounded {small.total} -> {large.total}")
    return small.total

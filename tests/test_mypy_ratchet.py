"""tools/mypy_ratchet.py, the strict-typing ratchet of `make lint`, judged on mypy output it is given."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

from mypy_ratchet import PACKAGES, compare, count_errors, read_baseline

BASELINE = {"sessionledger.core": 0, "sessionledger": 3, "frontend": 2}
OUTPUT = """\
client/sessionledger/queue.py:12: error: Missing type arguments for generic type "dict"  [type-arg]
client/sessionledger/queue.py:40: note: See https://mypy.readthedocs.io for more
client/sessionledger/state.py:7:5: error: Function is missing a return type annotation  [no-untyped-def]
client/sessionledger/core/redaction/engine.py:3: error: Returning Any from function  [no-any-return]
frontend/views/pages.py:36: error: Call to untyped function "unscoped" in typed context  [no-untyped-call]
"""


def test_errors_are_counted_for_the_package_their_file_belongs_to() -> None:
    counts, lines = count_errors(OUTPUT)
    assert counts == {"sessionledger": 2, "sessionledger.core.redaction": 1, "frontend": 1}
    assert len(lines["sessionledger"]) == 2  # the note is not an error


def test_a_package_that_gains_an_error_fails() -> None:
    rises, _, _ = compare(count_errors(OUTPUT)[0], {**BASELINE, "sessionledger": 1, "sessionledger.core.redaction": 1})
    assert rises == ["sessionledger"]


def test_the_core_fails_on_any_error_whatever_the_baseline_says() -> None:
    counts, _ = count_errors("client/sessionledger/core/formats/codex.py:1: error: Bad  [misc]\n")
    rises, _, _ = compare(counts, {"sessionledger.core": 5})
    assert rises == ["sessionledger.core"]


def test_a_count_that_falls_asks_for_a_lower_baseline() -> None:
    counts, _ = count_errors(OUTPUT)
    rises, falls, lowered = compare(counts, {**BASELINE, "sessionledger.core.redaction": 1})
    assert (rises, falls) == ([], ["sessionledger", "frontend"])
    assert lowered == {**BASELINE, "sessionledger.core.redaction": 1, "sessionledger": 2, "frontend": 1}


def test_an_error_outside_the_packages_has_no_allowance() -> None:
    rises, _, _ = compare(count_errors("tools/x.py:1: error: Bad  [misc]\n")[0], BASELINE)
    assert rises == ["other"]


def test_the_committed_baseline_names_every_package_and_holds_the_core_at_zero() -> None:
    baseline = read_baseline()
    assert set(baseline) == {name for _, name in PACKAGES}
    assert baseline["sessionledger.core"] == 0

"""The real Claude Code transcripts, and the marker for tests that need them.

They are not part of the repository: they sit beside it (``../shared/fixtures/transcripts``) or
wherever ``SESSIONLEDGER_FIXTURES`` points. A test that reads them carries ``@real_transcripts``;
when the folder is absent such tests are skipped, and the run's summary says so in one line
(``tests/conftest.py``), so a skipped fixture test cannot hide in a green run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REAL_TRANSCRIPTS = Path(
    os.environ.get("SESSIONLEDGER_FIXTURES") or Path(__file__).resolve().parents[2] / "shared/fixtures/transcripts"
)
MARKER = "real_transcripts"
real_transcripts = getattr(pytest.mark, MARKER)


def available() -> bool:
    return REAL_TRANSCRIPTS.is_dir() and any(REAL_TRANSCRIPTS.glob("*.jsonl"))

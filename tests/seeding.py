"""``bench/seed_sessions.py`` for tests: many sessions in one INSERT … SELECT generate_series."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from seed_sessions import commit_of, seed_sessions

__all__ = ["commit_of", "seed_sessions"]

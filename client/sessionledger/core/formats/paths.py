"""Claude Code's project directory name for a working directory: kept by its adapter
(`sessionledger.agents.claude_code`, which the hooks import without this package)."""

from __future__ import annotations

from ..claude_layout import MAX_NAME, encode_project_dir

__all__ = ["MAX_NAME", "encode_project_dir"]

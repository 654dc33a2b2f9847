"""Sessionledger client: captures the conversation behind each commit.

Standard library only; submodules are imported lazily so the hook path stays fast.
"""

from sessionledger.core.version import __version__

__all__ = ["__version__"]

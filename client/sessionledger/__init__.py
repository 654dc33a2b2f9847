"""Sessionledger client: captures the conversation behind each commit.

Standard library only; submodules are imported lazily so the hook path stays fast.
"""

__version__ = "0.1.0"

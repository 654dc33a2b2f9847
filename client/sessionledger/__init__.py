"""Sessionledger client: captures the conversation behind each commit.

Standard library only; submodules are imported lazily so the hook path stays fast.
"""

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    if name == "__version__":  # looked up when asked: every hook imports this package, few want the version
        from sessionledger.core.version import __version__

        return __version__
    raise AttributeError(f"module 'sessionledger' has no attribute {name!r}")

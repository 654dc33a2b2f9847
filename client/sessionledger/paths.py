"""Where the client keeps its files: config under XDG_CONFIG_HOME, state and queue under
XDG_STATE_HOME (docs/design.md §7), so a test or a CI job can point both at a temporary directory.

Only `os` is used: this module is on the hook's fast path.
"""

from __future__ import annotations

import os

APP = "sessionledger"


def _xdg(variable: str, fallback: str) -> str:
    base = os.environ.get(variable) or os.path.join(os.path.expanduser("~"), fallback)
    return os.path.join(base, APP)


def config_dir() -> str:
    return _xdg("XDG_CONFIG_HOME", ".config")


def config_file() -> str:
    return os.path.join(config_dir(), "config.json")


def state_dir() -> str:
    return _xdg("XDG_STATE_HOME", os.path.join(".local", "state"))


def state_file() -> str:
    return os.path.join(state_dir(), "state.json")


def state_lock() -> str:
    return os.path.join(state_dir(), "state.lock")


def heads_dir() -> str:
    """One small file per git directory: the HEAD commit last observed there."""
    return os.path.join(state_dir(), "heads")


def queue_dir() -> str:
    return os.path.join(state_dir(), "queue")


def sent_dir() -> str:
    """Metadata of uploaded segments (server id, changed lines) kept for `status` and `fork`."""
    return os.path.join(state_dir(), "sent")


def uploader_lock() -> str:
    return os.path.join(state_dir(), "uploader.lock")


def uploader_progress() -> str:
    """What the uploader holding the lock is sending and how far it got (read by `sync`)."""
    return os.path.join(state_dir(), "uploader.progress.json")


def uploader_wait_lock() -> str:
    """Held by the one detached uploader that sleeps until the next retry (others just exit)."""
    return os.path.join(state_dir(), "uploader.wait.lock")


def log_file() -> str:
    return os.path.join(state_dir(), "sessionledger.log")


def claude_dir() -> str:
    """Claude Code's root (`CLAUDE_CONFIG_DIR` moves it, docs/claude-code.md §1.1)."""
    return os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")

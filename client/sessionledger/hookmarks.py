"""How a hook handler `init` wrote is recognised in an agent's settings, and the refusal to touch
a settings file whose shape is wrong. Beneath both `hookinstall` (Claude Code's settings) and the
agent adapters that merge their own (Gemini CLI's): neither imports the other for these.
"""

from __future__ import annotations

import re

_OURS = re.compile(r"sessionledger(?:\.exe|[/\\]hook_entry\.py)?['\"]? hook ([a-z-]+)")


class SettingsError(ValueError):
    """A settings file we must not touch (not JSON, wrong shapes); the message says why."""


def our_event(command: object) -> str | None:
    """The sub-command of a handler `init` wrote (any form, old or new); None for others."""
    match = _OURS.search(command) if isinstance(command, str) else None
    return match.group(1) if match else None

"""The hooks `init` writes into Claude Code's settings, and how to recognise them later.

Two kinds of command, because a settings file is either one person's or everybody's
(docs/client.md "Hooks that never hurt a teammate"):

- **personal** (`.claude/settings.local.json`, `~/.claude/settings.json`): the interpreter that
  ran `init` and the launcher beside the package, by absolute paths —
  `<python> -I -S <package>/hook_entry.py` (see `hook_entry`: no console-script wrapper, no
  `site`) — so a venv or pipx install works although `sessionledger` is not on the hooks' PATH;
- **team** (the committed `.claude/settings.json`): a POSIX `sh` guard that runs the client only
  when it is on PATH and otherwise exits 0 without a word, so a teammate without it sees no hook
  error. It passes `--via team`: a person who also has personal hooks is served by those
  (`hook` returns at once), so nothing runs twice.

Claude Code runs a hook's `command` with `sh -c` (macOS, Linux) or Git Bash (Windows, the
default since 2.1.47); paths are written with forward slashes so Git Bash takes them as they are.
"""

from __future__ import annotations

import json
import os
import shlex
import sys

from sessionledger.agents.claude_code import ClaudeCode
from sessionledger.hookmarks import SettingsError, our_event

TEAM_FLAG = "--via team"
TIMEOUT_SECONDS = 30
FAILURE_EVENT = "PostToolUseFailure"
# (Claude Code event, matcher, our sub-command): what `init` installs, declared by the adapter.
HOOKS = ClaudeCode.hooks
LAUNCHER = "hook_entry.py"


def client_command() -> str:
    """Shell words that start the client now running, by absolute paths: this interpreter,
    isolated and without `site`, on the launcher inside this package."""
    launcher = os.path.join(os.path.dirname(os.path.abspath(__file__)), LAUNCHER)
    return f"{_quote(sys.executable)} -I -S {_quote(launcher)}"


def _quote(path: str) -> str:
    return shlex.quote(path.replace(os.sep, "/") if os.sep != "/" else path)


def personal_command(name: str, client: str | None = None) -> str:
    return f"{client or client_command()} hook {name}"


def team_command(name: str) -> str:
    """Runs the client found on PATH; without one, `if` takes no branch and the status is 0."""
    return f"if command -v sessionledger >/dev/null 2>&1; then exec sessionledger hook {name} {TEAM_FLAG}; fi"


def is_team(command: str) -> bool:
    return TEAM_FLAG in command


def is_guarded(command: str) -> bool:
    return command.lstrip().startswith("if command -v ")


def read_settings(path: str) -> dict:
    """A JSON settings file as a dict ({} when absent); refuses to touch anything else."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return {}
    try:
        settings = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise SettingsError(f"{path} is not valid JSON ({exc}); not touching it") from None
    if not isinstance(settings, dict):
        raise SettingsError(f"{path} does not hold a JSON object; not touching it")
    return settings


def handlers(settings: dict) -> list[tuple[str, dict]]:
    """(event, handler) for every handler of ours in a settings object."""
    found = []
    hooks = settings.get("hooks")
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            for handler in group.get("hooks", []) if isinstance(group, dict) else ():
                if isinstance(handler, dict) and our_event(handler.get("command")):
                    found.append((event, handler))
    return found


def merge(settings: dict, command_for: object, *, events: tuple = HOOKS) -> None:
    """Ensure one handler of ours per event, running `command_for(name)`; keep every other one.

    A handler of ours already there (an older form too) is updated in place, so running `init`
    again, or upgrading from a bare `sessionledger hook …`, never adds a second one.
    """
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError("`hooks` is not an object; fix it by hand first")
    for event, matcher, name in events:
        _merge_one(hooks, event, matcher, command_for(name))  # type: ignore[operator]


def _merge_one(hooks: dict, event: str, matcher: str | None, command: str) -> None:
    groups = hooks.setdefault(event, [])
    if not isinstance(groups, list):
        raise SettingsError(f"hooks.{event} is not a list; fix it by hand first")
    name = our_event(command)
    for group in groups:
        for existing in group.get("hooks", []) if isinstance(group, dict) else []:
            if isinstance(existing, dict) and our_event(existing.get("command")) == name:
                existing.update(type="command", command=command, timeout=existing.get("timeout", TIMEOUT_SECONDS))
                return
    ours: dict = {"hooks": [{"type": "command", "command": command, "timeout": TIMEOUT_SECONDS}]}
    groups.append({"matcher": matcher, **ours} if matcher is not None else ours)


def remove_event(settings: dict, event: str) -> bool:
    """Drop our handlers of one event (and groups left empty); True when something went."""
    groups = (settings.get("hooks") or {}).get(event)
    if not isinstance(groups, list):
        return False
    removed = False
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            kept = [h for h in group["hooks"] if not (isinstance(h, dict) and our_event(h.get("command")))]
            removed = removed or len(kept) != len(group["hooks"])
            group["hooks"] = kept
    settings["hooks"][event] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]
    if not settings["hooks"][event]:
        del settings["hooks"][event]
    return removed


def personal_in(text: bytes, name: str) -> bool:
    """Does a settings file's text hold a personal (non-team) handler of ours for `name`?

    A substring test, cheap enough for the hook: a personal command ends with the sub-command
    name, so in JSON it is followed by the string's closing quote.
    """
    return b"sessionledger" in text and f' hook {name}"'.encode() in text

"""`sessionledger hook <event> [--via team]`: the thin dispatcher the agents' hooks and the git
post-commit hook call.

Contract with Claude Code (docs/claude-code.md §2): JSON on stdin; exit 0 always — a non-zero exit would
show up as a hook error, and exit 2 on PostToolUse would feed stderr to the model as if its
command had failed — and print nothing on PostToolUse(Failure) and SessionEnd; SessionStart
prints its JSON answer (or nothing). Every failure goes to the log instead.

`--via team` marks the guarded command of the committed settings (see `hookinstall`): when the
same person also has personal hooks, those do the work and this call returns at once.
`SESSIONLEDGER_PROBE=<file>` makes any call write who answered into that file and do nothing
else: how `status` checks that the hooks reach a client, run exactly as Claude Code runs them.
Imports are deliberately minimal: this runs after every Bash call.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: this runs after every Bash call
if TYPE_CHECKING:
    from typing import NoReturn

HANDLERS = {
    "post-tool-use": "sessionledger.hooks.post_tool_use",
    "post-tool-use-failure": "sessionledger.hooks.post_tool_use",
    "session-start": "sessionledger.hooks.session_start",
    "session-end": "sessionledger.hooks.session_end",
    "post-commit": "sessionledger.hooks.post_commit",  # the git hook (`init --git-hook`): no stdin
}
PROBE_VARIABLE = "SESSIONLEDGER_PROBE"


def run(argv: list[str]) -> int:
    try:
        via_team = "--via" in argv and argv[argv.index("--via") + 1 :][:1] == ["team"]
        argv = [a for a in argv if a not in ("--via", "team")]
        probe = os.environ.get(PROBE_VARIABLE)
        payload = {} if probe or argv[:1] == ["post-commit"] else _read_payload()
        event = argv[0] if argv else None
        if event not in HANDLERS:  # an agent's own event name (argument or `hook_event_name`)
            event = _handler_of(event or str(payload.get("hook_event_name")))
        deferred = via_team and _personal_hooks_present(event or "", payload)
        if probe:
            _answer_probe(probe, event, via_team, deferred)
            return 0
        module_name = HANDLERS.get(event or "")
        if module_name is not None and not deferred:
            __import__(module_name)
            sys.modules[module_name].handle(payload)
    except BaseException:
        _log_failure(argv)
    return 0


def run_and_exit(argv: list[str]) -> NoReturn:
    """`run`, then end the process without interpreter teardown (module GC, atexit): every file
    the hook wrote is closed and fsynced already, and its caller is waiting for the exit."""
    code = run(argv)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _handler_of(agent_event: str) -> str | None:
    """Our handler for an agent's hook event name (each adapter's `hook_events`)."""
    from sessionledger import agents

    return next((a.hook_events[agent_event] for a in agents.every() if agent_event in a.hook_events), None)


def _read_payload() -> dict:
    if sys.stdin is None or sys.stdin.isatty():
        return {}
    from sessionledger.fastjson import loads

    data = loads(sys.stdin.buffer.read().decode("utf-8", "replace"))
    return data if isinstance(data, dict) else {}


def _personal_hooks_present(event: str, payload: dict) -> bool:
    """Does this person also have personal hooks of ours for `event` (local or user settings)?"""
    from sessionledger.hookinstall import personal_in
    from sessionledger.paths import claude_dir

    project = os.environ.get("CLAUDE_PROJECT_DIR") or str(payload.get("cwd") or os.getcwd())
    for path in (os.path.join(project, ".claude", "settings.local.json"), os.path.join(claude_dir(), "settings.json")):
        try:
            with open(path, "rb") as handle:
                if personal_in(handle.read(), event):
                    return True
        except OSError:
            continue
    return False


def _answer_probe(path: str, event: str | None, via_team: bool, deferred: bool) -> None:
    import json

    from sessionledger import __version__

    answer = {"version": __version__, "executable": sys.executable, "event": event, "team": via_team}
    with open(path, "w", encoding="utf-8") as handle:
        json.dump({**answer, "deferred": deferred}, handle)


def _log_failure(argv: list[str]) -> None:
    try:
        from sessionledger import log

        log.exception(f"hook {' '.join(argv)} failed")
    except BaseException:
        pass


def register(sub: object) -> None:
    """For `--help` only: `cli.main` dispatches `hook` before argparse is imported."""
    parser = sub.add_parser("hook", help="run an agent hook or the git post-commit hook (JSON on stdin)")  # type: ignore[attr-defined]
    parser.add_argument("event", choices=sorted(HANDLERS))
    parser.add_argument("--via", choices=["team"], help="called by the guarded team hook")
    parser.set_defaults(func=lambda options: run([options.event]))

"""`sessionledger hook <event>`: the thin dispatcher Claude Code calls.

Contract with Claude Code (reference §2): JSON on stdin; exit 0 always — a non-zero exit would
show up as a hook error, and exit 2 on PostToolUse would feed stderr to the model as if its
command had failed — and print nothing on PostToolUse and SessionEnd; SessionStart prints its
JSON answer (or nothing). Every failure goes to the log instead.
Imports are deliberately minimal: this runs after every Bash call.
"""

from __future__ import annotations

import sys

HANDLERS = {
    "post-tool-use": "sessionledger.hooks.post_tool_use",
    "session-start": "sessionledger.hooks.session_start",
    "session-end": "sessionledger.hooks.session_end",
}
_EVENT_NAMES = {"PostToolUse": "post-tool-use", "SessionStart": "session-start", "SessionEnd": "session-end"}


def run(argv: list[str]) -> int:
    try:
        payload = _read_payload()
        event = argv[0] if argv else str(payload.get("hook_event_name", ""))
        module_name = HANDLERS.get(_EVENT_NAMES.get(event, event))
        if module_name is not None:
            __import__(module_name)
            sys.modules[module_name].handle(payload)
    except BaseException:
        _log_failure(argv)
    return 0


def _read_payload() -> dict:
    if sys.stdin is None or sys.stdin.isatty():
        return {}
    from sessionledger.fastjson import loads

    data = loads(sys.stdin.buffer.read().decode("utf-8", "replace"))
    return data if isinstance(data, dict) else {}


def _log_failure(argv: list[str]) -> None:
    try:
        from sessionledger import log

        log.exception(f"hook {' '.join(argv)} failed")
    except BaseException:
        pass


def register(sub: object) -> None:
    """For `--help` only: `cli.main` dispatches `hook` before argparse is imported."""
    parser = sub.add_parser("hook", help="run a Claude Code hook (reads its JSON on stdin)")  # type: ignore[attr-defined]
    parser.add_argument("event", choices=sorted(HANDLERS))
    parser.set_defaults(func=lambda options: run([options.event]))

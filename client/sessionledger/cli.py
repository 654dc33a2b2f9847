"""Entry point: `sessionledger <command>`.

`hook` is dispatched before anything else is imported (no argparse: it imports `re`, `gettext`
and more, a large share of the hook's budget). Other commands build the argparse tree, importing
each command module; a command's heavy imports live inside its `run`.
"""

from __future__ import annotations

import sys

COMMANDS: tuple[str, ...] = (
    "login",
    "init",
    "status",
    "sync",
    "list",
    "show",
    "capture",
    "task",
    "hook",
    "context",
    "config",
    "mcp",
)
_MODULES = {"list": "listing", "config": "config_cmd", "mcp": "mcp_cmd"}
# Conversation history: fork a turn, rewind files, restore, relink after a rebase, PR links, import.
COMMANDS += ("turns", "fork", "rewind", "restore", "relink", "pr-links", "pr", "import")
_MODULES.update({"pr-links": "prlinks", "import": "importer"})
# Attribution: which lines the agent wrote, and the conversation behind one line.
COMMANDS += ("blame", "why")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["hook"]:
        from sessionledger.commands import hook

        if argv is None:
            hook.run_and_exit(args[1:])
        return hook.run(args[1:])
    if args[:1] == ["_upload"]:  # the detached uploader where fork() is unavailable
        from sessionledger import uploader

        uploader.run(uploader.Mode.DETACHED)
        return 0
    return _run_command(args)


def _run_command(args: list[str]) -> int:
    from sessionledger.commands.common import CommandError, terminal_safe

    parser = build_parser(only=args[0] if args and args[0] in COMMANDS else None)
    options = parser.parse_args(args)
    if not getattr(options, "func", None):
        parser.print_help()
        return 2
    try:
        return int(options.func(options) or 0)
    except CommandError as exc:
        print(f"sessionledger: {terminal_safe(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


def build_parser(only: str | None = None):
    """Every command's parser, or with `only` just that one (a command need not import the
    others' modules to start: `why` answers interactively)."""
    import argparse
    import importlib

    from sessionledger import __version__

    parser = argparse.ArgumentParser(
        prog="sessionledger", description="Capture the AI-assistant conversation behind every commit."
    )
    parser.add_argument("--version", action="version", version=f"sessionledger {__version__}")
    sub = parser.add_subparsers(title="commands", metavar="<command>")
    for name in (only,) if only else COMMANDS:
        module = importlib.import_module(f"sessionledger.commands.{_MODULES.get(name, name)}")
        module.register(sub)
    return parser

"""Recognise beads task commands in a Bash command line (`bd close SL-42`, docs/design.md §7 "Tasks").

Closing a task from the assistant is detected like a commit; `bd update SL-42 --status
in_progress` marks where the task started, like `sessionledger task start`.
"""

from __future__ import annotations

import os

_OPERATORS = {"&&", "||", ";", "|", "&", "(", ")", ";;", "|&"}
_VALUE_FLAGS = {"-r", "--reason", "--db", "--actor", "-s", "--status", "--session", "-m", "--message"}


def words(command: str) -> list[list[str]]:
    """The simple commands of a command line, each as its words (quotes removed)."""
    import shlex  # imports `re`: only when a command names `bd`, not in every commit capture

    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: fall back to plain splitting
        tokens = command.split()
    commands: list[list[str]] = [[]]
    for token in tokens:
        if token in _OPERATORS:
            commands.append([])
        else:
            commands[-1].append(token)
    return [c for c in commands if c]


def closed_ids(command: str) -> list[str]:
    return [task for verb, task, _ in _bd_calls(command) if verb == "close"]


def started_ids(command: str) -> list[str]:
    return [task for verb, task, flags in _bd_calls(command) if verb == "update" and _in_progress(flags)]


def _bd_calls(command: str) -> list[tuple[str, str, list[str]]]:
    """(verb, task id, flags) for each id named by a `bd <verb> …` command."""
    calls = []
    for argv in words(command):
        if len(argv) < 3 or os.path.basename(argv[0]) != "bd":
            continue
        ids, flags = _split_args(argv[2:])
        calls += [(argv[1], task, flags) for task in ids]
    return calls


def _split_args(args: list[str]) -> tuple[list[str], list[str]]:
    ids, flags, skip = [], [], False
    for arg in args:
        if skip:
            flags.append(arg)
            skip = False
        elif arg.startswith("-"):
            flags.append(arg)
            skip = arg in _VALUE_FLAGS
        elif looks_like_id(arg):
            ids.append(arg)
    return ids, flags


def _in_progress(flags: list[str]) -> bool:
    joined = " ".join(flags).replace("=", " ")
    return "in_progress" in joined or "--claim" in flags


def looks_like_id(text: str) -> bool:
    """Beads ids are `<prefix>-<hash or number>[.<child>]`: `bd-a1b2`, `SL-42`, `bd-a3f8.1`."""
    prefix, dash, rest = text.partition("-")
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._")
    return bool(prefix and dash and rest) and len(text) <= 100 and set(text) <= allowed


def succeeded(response: object, task_id: str) -> bool:
    """Whether `bd close` reported success: not interrupted and no `Error` line."""
    if not isinstance(response, dict):
        return True
    if response.get("interrupted"):
        return False
    output = f"{response.get('stdout') or ''}\n{response.get('stderr') or ''}"
    return not any(line.lstrip().lower().startswith("error") for line in output.splitlines())

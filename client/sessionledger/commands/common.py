"""Helpers shared by the commands: errors, config and API client, output formatting."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from sessionledger import config as config_mod
from sessionledger import hookinstall, hookmarks
from sessionledger.api import ApiError, Client


class CommandError(Exception):
    """A failure the user can act on: printed as `sessionledger: <message>`, exit code 1."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


# What the server returns is a teammate's upload: none of it may drive the reader's terminal.
# C0 controls but tab and newline (ESC starts OSC 52 clipboard writes, OSC 8 links, screen
# clears; CR overwrites a line), DEL and the C1 controls (U+009B is a one-character CSI) go;
# bidi embeddings, overrides and isolates, which reorder what is shown, are made visible.
_C0_C1 = [*range(0, 9), *range(11, 32), 127, *range(128, 160)]
_BIDI = [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]  # LRE…RLO, LRI…PDI
_UNSAFE = {**{c: None for c in _C0_C1}, **{c: f"<U+{c:04X}>" for c in _BIDI}}
_JSON_UNSAFE = {c: f"\\u{c:04x}" for c in [127, *range(128, 160), *_BIDI]}


def terminal_safe(text: str) -> str:
    """``text`` as it may reach a terminal: every server-supplied string the CLI prints goes
    through this (one pass of `str.translate`, linear in the text)."""
    return text.translate(_UNSAFE)


def confined(path: str, root: str, what: str) -> str:
    """``path`` resolved (`..` and symlinks followed), refused unless it is ``root`` or below it:
    a directory a transcript or the server names never takes a command out of the tree it works
    on (a teammate's `cwd` of `<repo>/../../.ssh`, or a committed symlink to `~/.ssh`)."""
    resolved, tree = os.path.realpath(path), os.path.realpath(root)
    if resolved != tree and not resolved.startswith(tree.rstrip(os.sep) + os.sep):
        raise CommandError(f"{what} {terminal_safe(path)!r} resolves to {resolved}, outside {tree}: refused")
    return resolved


def read_json_object(path: str) -> dict:
    """A JSON settings file (Claude Code's settings, .mcp.json) as an object; a clear error otherwise."""
    try:
        return hookinstall.read_settings(path)
    except hookmarks.SettingsError as exc:
        raise CommandError(str(exc)) from None


def load_config() -> config_mod.Config:
    """The settings in effect here: the repository around the working directory may override."""
    try:
        return config_mod.load(os.getcwd())
    except config_mod.ConfigError as exc:
        raise CommandError(str(exc)) from None


def client(config: config_mod.Config, *, need_token: bool = True) -> Client:
    if not config.server:
        raise CommandError("no server configured: run `sessionledger login --server https://…`")
    if need_token and not config.token:
        raise CommandError("not logged in: run `sessionledger login`")
    return Client(
        config.server,
        config.token,
        timeout=float(config["command_timeout"]),
        transfer_timeout=float(config["upload_timeout"]),
    )


def api_error(exc: ApiError) -> CommandError:
    if exc.status == 401:
        return CommandError(f"{exc.message} Run `sessionledger login`.")
    return CommandError(exc.message if exc.status == 0 else f"the server answered {exc.status}: {exc.message}")


def project_for_cwd(config: config_mod.Config, api: Client, explicit: str | None = None) -> str:
    """`--project`, else the project of the repository around the working directory."""
    if explicit:
        return explicit
    from sessionledger.project import ProjectUnknown, for_directory

    try:
        return for_directory(os.getcwd(), config, api)
    except ProjectUnknown as exc:
        raise CommandError(str(exc)) from None
    except ApiError as exc:
        raise api_error(exc) from None


def print_json(data: Any) -> None:
    """JSON for a script, still safe on a terminal: `json` escapes C0 controls itself; DEL, C1
    and bidi controls become `\\u` escapes too (the same string once parsed)."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False).translate(_JSON_UNSAFE) + "\n")


def table(rows: list[list[str]], headers: list[str]) -> str:
    """Left-aligned columns; the last column is not padded (titles can be long)."""
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers) - 1)]
    lines = []
    for row in [headers, *rows]:
        cells = [str(c).ljust(w) for c, w in zip(row, widths, strict=False)] + [str(row[-1])]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def age(epoch: float | None) -> str:
    """`12s ago`, `5m ago`, `3h ago`, `2d ago`."""
    if not epoch:
        return "-"
    seconds = max(0, int(time.time() - epoch))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"


def short(text: str | None, width: int = 60) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


class ProgressBar:
    """`[#####-----] 3/6 checkpoint 1a2b3c4d uploaded` on a terminal, one line per step otherwise."""

    def __init__(self, total: int, stream: Any = None) -> None:
        self.total, self.done = max(total, 1), 0
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def step(self, label: str) -> None:
        self.done = min(self.done + 1, self.total)
        filled = int(20 * self.done / self.total)
        line = f"[{'#' * filled}{'-' * (20 - filled)}] {self.done}/{self.total} {label}"
        if self.tty:
            self.stream.write("\r\033[K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty and self.done:
            self.stream.write("\n")

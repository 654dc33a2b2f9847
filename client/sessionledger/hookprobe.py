"""Do the installed hooks reach a client? Asked the way Claude Code would run them.

For each settings file Claude Code reads here (user, project, project-local) the handlers of
ours are listed, and the PostToolUse one — the one capture depends on — is run for real: its
`command` through `sh -c` (Git Bash's `bash` where there is no `sh`), from the repository root
with `CLAUDE_PROJECT_DIR` set, a harmless payload on stdin, and `SESSIONLEDGER_PROBE` pointing at
a file the client writes instead of doing anything (see `commands.hook`). A command that is not
found (`sh: sessionledger: not found`, exit 127), a guard that finds no client, or a timeout is
reported with what the shell said.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Any

from sessionledger import hookinstall, hookmarks, paths

TIMEOUT = 15.0
CAPTURE_EVENT = "post-tool-use"
_PAYLOAD = {"hook_event_name": "PostToolUse", "tool_name": "SessionledgerProbe", "session_id": "probe"}


@dataclass
class FileReport:
    path: str
    scope: str  # "user", "team" (committed) or "personal" (settings.local.json)
    events: list[str] = field(default_factory=list)  # our sub-commands registered there
    error: str = ""  # the file cannot be read as JSON
    command: str = ""  # the PostToolUse command that was run
    reached: dict | None = None  # the client's answer: version, executable, deferred
    problem: str = ""  # why it does not reach a client

    @property
    def works(self) -> bool:
        return self.reached is not None and not self.reached.get("deferred")

    def as_json(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v not in ("", None, [])} | {"works": self.works}


def settings_files(worktree: str | None) -> list[tuple[str, str]]:
    files = [(os.path.join(paths.claude_dir(), "settings.json"), "user")]
    if worktree:
        files += [
            (os.path.join(worktree, ".claude", "settings.json"), "team"),
            (os.path.join(worktree, ".claude", "settings.local.json"), "personal"),
        ]
    return [(path, scope) for path, scope in files if os.path.exists(path)]


def check(worktree: str | None) -> list[FileReport]:
    """A report per settings file that has hooks of ours."""
    reports = []
    for path, scope in settings_files(worktree):
        report = FileReport(path, scope)
        try:
            found = hookinstall.handlers(hookinstall.read_settings(path))
        except hookmarks.SettingsError as exc:
            report.error = str(exc)
            reports.append(report)
            continue
        if not found:
            continue
        report.events = sorted({hookmarks.our_event(h.get("command")) or "" for _, h in found})
        commands = [str(h["command"]) for _, h in found if hookmarks.our_event(h["command"]) == CAPTURE_EVENT]
        command = commands[0] if commands else ""
        if command:
            report.command = command
            _probe(report, command, worktree or os.getcwd())
        else:
            report.problem = "no PostToolUse hook of ours: commits are not captured"
        reports.append(report)
    return reports


def _probe(report: FileReport, command: str, cwd: str) -> None:
    report.reached, report.problem = run_probe(command, cwd, json.dumps({**_PAYLOAD, "cwd": cwd}).encode())


def run_probe(command: str, cwd: str, stdin: bytes = b"") -> tuple[dict[str, Any] | None, str]:
    """Run `command` through `sh -c` with `SESSIONLEDGER_PROBE` set: (the client's answer, or
    None and why nothing answered)."""
    shell = shutil.which("sh") or shutil.which("bash")
    if shell is None:
        return None, "no POSIX shell (sh or Git Bash) to run it with, as Claude Code would"
    with tempfile.TemporaryDirectory() as tmp:
        answer = os.path.join(tmp, "probe.json")
        env = {**os.environ, "SESSIONLEDGER_PROBE": answer, "CLAUDE_PROJECT_DIR": cwd}
        try:
            result = subprocess.run(
                [shell, "-c", command], input=stdin, cwd=cwd, env=env, capture_output=True, timeout=TIMEOUT, check=False
            )
        except subprocess.TimeoutExpired:
            return None, f"did not finish within {TIMEOUT:.0f} s"
        reached = _read(answer)
    return reached, "" if reached is not None else _why_not(command, result)


def check_git_hook(path: str, cwd: str) -> tuple[dict[str, Any] | None, str]:
    """Does the git post-commit hook at `path` reach a client? Its own lines are run, with the
    probe set, except the chained hook (someone else's, which must not run for a check). A hook
    that finds no client exits 0 in silence, so only the client's answer counts."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        return None, f"cannot read it: {exc}"
    start = text.find('chained="')
    end = text.find("\nfi\n", start)
    if start >= 0 and end >= 0:
        text = text[:start] + text[end + 4 :]
    reached, problem = run_probe(text, cwd)
    if reached is None and not problem.startswith(("did not", "no POSIX")):
        problem = "the client it calls is gone or does not run, and no `sessionledger` is on PATH"
    return reached, problem


def _read(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _why_not(command: str, result: subprocess.CompletedProcess[bytes]) -> str:
    said = result.stderr.decode("utf-8", "replace").strip().splitlines()
    detail = f": {said[-1]}" if said else ""
    if hookinstall.is_guarded(command) and result.returncode == 0:
        return "its guard found no `sessionledger` on PATH, so it skips you silently"
    if result.returncode == 127:
        return f"the command is not found (exit 127){detail}"
    return f"it exited {result.returncode} without reaching the client{detail}"

"""`sessionledger status`: is capture working, and if not, why — config, login, hooks, queue.

Every segment still in the queue is listed with the reason it waits (server down and when the
next try is, token expired, no project, rejected with the server's message), so nothing sits
there silently.
"""

from __future__ import annotations

import argparse
import os
import time

from sessionledger import config as config_mod
from sessionledger import fsutil, gitrefs, paths, queue
from sessionledger.commands.common import age, load_config, print_json, short, table

WHY = {
    queue.PENDING: "waiting to upload",
    queue.AUTH: "login needed",
    queue.BLOCKED: "blocked",
    queue.REJECTED: "rejected by the server",
    queue.BROKEN: "cannot be read back",
}


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("status", help="show configuration, login, hooks, the upload queue and recent captures")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--check", action="store_true", help="also verify the token with the server")
    parser.set_defaults(func=run)


def run(options: argparse.Namespace) -> int:
    report = collect(check=options.check)
    if options.json:
        print_json(report)
    else:
        print(render(report))
    return 0


def collect(*, check: bool = False) -> dict:
    config = load_config()
    return {
        "config_file": paths.config_file(),
        "state_dir": paths.state_dir(),
        "log_file": paths.log_file(),
        "config": {k: config_mod.shown(k, v) for k, v in config.values.items()},
        "sources": {k: v for k, v in config.sources.items() if v != "default"},
        "login": _login(config, check),
        "hooks": _hooks(),
        "uploader_running": fsutil.is_locked(paths.uploader_lock()),
        "queue": [_queued(e) for e in queue.entries()],
        "recent": [_sent(r) for r in queue.sent(5)],
    }


def _login(config: config_mod.Config, check: bool) -> dict:
    login = {"server": config.server or None, "token": bool(config.token), "verified": None}
    if check and config.server and config.token:
        from sessionledger.api import ApiError, Client

        try:
            Client(config.server, config.token, timeout=10).get("/projects")
            login["verified"] = True
        except ApiError as exc:
            login["verified"], login["error"] = False, exc.message
    return login


def _hooks() -> dict:
    from sessionledger.commands.init import settings_path

    repo = gitrefs.find_repo(os.getcwd())
    candidates = [settings_path(None)]
    if repo is not None:
        candidates += [settings_path(repo.worktree), settings_path(repo.worktree, local=True)]
    return {path: _has_our_hooks(path) for path in candidates if os.path.exists(path)}


def _has_our_hooks(path: str) -> bool:
    try:
        with open(path, encoding="utf-8") as handle:
            return "sessionledger hook post-tool-use" in handle.read()
    except OSError:
        return False


def _queued(entry: queue.Entry) -> dict:
    status = entry.status()
    intent = entry.intent
    return {
        "id": entry.id,
        "what": entry.describe(),
        "state": status.get("state", queue.PENDING),
        "reason": status.get("reason"),
        "attempts": status.get("attempts", 0),
        "next_at": status.get("next_at"),
        "captured_at": intent.get("captured_at"),
        "bytes": int(intent.get("end_offset", 0)) - int(intent.get("start_offset", 0)),
        "prepared": entry.prepared,
        "redaction": entry.metadata().get("redaction"),
    }


def _sent(record: dict) -> dict:
    session = record.get("session") or {}
    intent = record.get("intent") or {}
    kind = intent.get("kind")
    what = intent.get("task_id") if kind == "task" else (intent.get("commit_hash") or "")[:10]
    return {
        "what": f"{kind} {what}",
        "sent_at": record.get("sent_at"),
        "url": session.get("web_url") or session.get("url"),
        "duplicate": record.get("duplicate", False),
        "redaction": (record.get("metadata") or {}).get("redaction"),
    }


def render(report: dict) -> str:
    lines = [f"Config:   {report['config_file']}", f"State:    {report['state_dir']}"]
    lines += _render_login(report["login"])
    lines += _render_hooks(report["hooks"])
    lines += _render_queue(report["queue"], report["uploader_running"])
    lines += _render_recent(report["recent"])
    lines.append(f"Log:      {report['log_file']}")
    return "\n".join(lines)


def _render_login(login: dict) -> list[str]:
    if not login["server"]:
        return ["Server:   none — run `sessionledger login --server URL`"]
    state = "logged in" if login["token"] else "not logged in — run `sessionledger login`"
    if login["verified"] is False:
        state = f"token refused: {login.get('error')} — run `sessionledger login`"
    return [f"Server:   {login['server']} ({state})"]


def _render_hooks(hooks: dict) -> list[str]:
    installed = [path for path, ok in hooks.items() if ok]
    if not installed:
        return ["Hooks:    not installed — run `sessionledger init`"]
    return [f"Hooks:    {path}" for path in installed]


def _render_queue(entries: list[dict], running: bool) -> list[str]:
    suffix = " (an uploader is running)" if running else ""
    if not entries:
        return [f"Queue:    empty{suffix}"]
    rows = [[e["what"], age(e["captured_at"]), _why(e)] for e in entries]
    header = f"Queue:    {len(entries)} segment{'s' if len(entries) != 1 else ''} waiting{suffix}"
    return [header, _indent(table(rows, ["segment", "captured", "why it waits"]))]


def _why(entry: dict) -> str:
    text = WHY.get(entry["state"], entry["state"])
    if entry["state"] == queue.PENDING and entry["attempts"]:
        wait = max(0, int((entry["next_at"] or 0) - time.time()))
        text = f"{text} (try {entry['attempts']} failed; next in {wait}s)"
    return f"{text}: {short(entry['reason'], 100)}" if entry["reason"] else text


def _render_recent(recent: list[dict]) -> list[str]:
    if not recent:
        return ["Recent:   no captures uploaded yet"]
    rows = [[r["what"], age(r["sent_at"]), r["url"] or "-"] for r in recent]
    return ["Recent:", _indent(table(rows, ["segment", "uploaded", "link"]))]


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())

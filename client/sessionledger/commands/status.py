"""`sessionledger status`: is capture working, and if not, why — config, login, project, hooks,
queue (docs/client.md "status").

Nothing is taken on trust: the token is shown to the server (revoked or expired is said as
such), the project of this repository is resolved as an upload would resolve it, and each
settings file's PostToolUse hook is run the way Claude Code runs it (`hookprobe`). `--check`
exits 1 when capture would not work — no server or token, a refused token, hooks that reach no
client, an unresolved project — and says why. An unreachable server is not such a reason:
segments wait in the queue and go when it is back.

Every segment still in the queue is listed with the reason it waits (server down and when the
next try is, token expired, no project, rejected with the server's message), so nothing sits
there silently.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from sessionledger import config as config_mod
from sessionledger import fsutil, gitrefs, hookprobe, metalimits, paths, queue, resumable
from sessionledger.commands.common import age, load_config, print_json, short, table, terminal_safe
from sessionledger.intent import Intent

WHY = {
    queue.PENDING: "waiting to upload",
    queue.AUTH: "login needed",
    queue.BLOCKED: "blocked",
    queue.REJECTED: "rejected by the server",
    queue.BROKEN: "cannot be read back",
}
CHECK_SECONDS = 8.0  # every request of `status` together, whatever the server does


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("status", help="show configuration, login, hooks, the upload queue and recent captures")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--check", action="store_true", help="exit 1 (saying why) when capture would not work")
    parser.set_defaults(func=run)


def run(options: argparse.Namespace) -> int:
    report = collect()
    if options.json:
        print_json(report)
    else:
        print(terminal_safe(render(report)))  # the server's messages are in it
    if options.check and report["problems"]:
        print(terminal_safe("Capture would not work: " + "; ".join(report["problems"])), file=sys.stderr)
        return 1
    return 0


def collect() -> dict:
    config = load_config()
    repo = gitrefs.find_repo(os.getcwd())
    until = time.monotonic() + CHECK_SECONDS
    login = _login(config, until)
    report: dict[str, Any] = {
        "config_file": paths.config_file(),
        "state_dir": paths.state_dir(),
        "log_file": paths.log_file(),
        "config": {k: config_mod.shown(k, v) for k, v in config.values.items()},
        "sources": {k: v for k, v in config.sources.items() if v != "default"},
        "login": login,
        "project": _project(config, repo, login, until),
        "hooks": [r.as_json() for r in hookprobe.check(repo.worktree if repo else None)],
        "git_hook": _git_hook(repo),
        "uploader_running": fsutil.is_locked(paths.uploader_lock()),
        "queue": [_queued(e) for e in queue.entries()],
        "recent": [_sent(r) for r in queue.sent(5)],
    }
    report["problems"] = problems(report, in_repo=repo is not None)
    return report


def _check_client(config: config_mod.Config, until: float) -> Any:
    from sessionledger.api import Client

    return Client(config.server, config.token, timeout=CHECK_SECONDS, until=until)


def _login(config: config_mod.Config, until: float) -> dict:
    """Ask the server whether it takes the token (and which projects it opens)."""
    login: dict = {"server": config.server or None, "token": bool(config.token), "verified": None}
    if not (config.server and config.token):
        return login
    from sessionledger.api import ApiError

    try:
        found = _check_client(config, until).get("/projects") or []
    except ApiError as exc:
        if exc.status == 0 or exc.transient:
            login["unreachable"] = exc.message
        else:
            login["verified"], login["error"] = False, exc.message
        return login
    login["verified"] = True
    login["projects"] = [p.get("slug") for p in found if isinstance(p, dict)]
    return login


def _project(config: config_mod.Config, repo: gitrefs.Repo | None, login: dict, until: float) -> dict:
    """The project this repository's captures go to, and where that comes from."""
    from sessionledger import gitmeta
    from sessionledger.project import ProjectUnknown, for_remote, pinned_for

    if repo is None:
        return {"slug": None, "problem": "not inside a git repository"}
    slug, source = pinned_for(repo.worktree, config)
    if slug is None and login.get("verified"):
        from sessionledger.api import ApiError

        try:
            api = _check_client(config, until)
            slug, source = for_remote(gitmeta.remote_url(repo.worktree), config, api), "the git remote"
        except (ProjectUnknown, ApiError) as exc:
            return {"slug": None, "problem": str(exc)}
    elif slug is None:
        remote = gitmeta.remote_url(repo.worktree)
        where = "its git remote, once the server can be asked" if remote else "nothing: no remote, no pin"
        return {"slug": None, "source": where, "problem": None if remote else "no project: run `init --project`"}
    mine = login.get("projects")
    if mine is not None and slug not in mine:
        return {"slug": slug, "source": source, "problem": f"project {slug} is not one of yours on the server"}
    return {"slug": slug, "source": source}


def problems(report: dict, *, in_repo: bool) -> list[str]:
    """Why capture would not work, in the order to fix them."""
    login, found = report["login"], []
    if not login["server"]:
        found.append("no server configured (`sessionledger login --server URL`)")
    elif not login["token"]:
        found.append("not logged in (`sessionledger login`)")
    elif login["verified"] is False:
        found.append(f"the server refuses the token: {login.get('error')} (`sessionledger login`)")
    hooks, git_hook = report["hooks"], report.get("git_hook") or {}
    if not any(h["works"] for h in hooks) and not git_hook.get("works"):
        why = [f"{h['path']}: {h.get('problem') or h.get('error')}" for h in hooks if not h["works"]]
        why += [f"{git_hook['path']}: {git_hook.get('problem')}"] if git_hook.get("installed") else []
        found.append(f"no hook reaches a client ({'; '.join(why) or 'none installed: run `sessionledger init`'})")
    if in_repo and report["project"].get("problem"):
        found.append(f"project unresolved: {report['project']['problem']}")
    return found


def _queued(entry: queue.Entry) -> dict:
    status = entry.status()
    intent = entry.intent
    return {
        "id": entry.id,
        "what": entry.describe(),
        "state": "awaiting_commit" if entry.waiting_for_commit else status.get("state", queue.PENDING),
        "reason": queue.AWAITING if entry.waiting_for_commit else status.get("reason"),
        "attempts": status.get("attempts", 0),
        "next_at": status.get("next_at"),
        "captured_at": intent.captured_at or None,
        "bytes": intent.end_offset - intent.start_offset,
        "upload": resumable.read_record(entry.path),  # a body sent in parts: how much the server holds
        "prepared": entry.prepared,
        "redaction": entry.metadata().get("redaction"),
        "cut": entry.local().get(metalimits.NOTES) or [],
    }


def _sent(record: dict) -> dict:
    session = record.get("session") or {}
    return {
        "what": Intent.from_json(record.get("intent")).describe(),
        "sent_at": record.get("sent_at"),
        "url": session.get("web_url") or session.get("url"),
        "duplicate": record.get("duplicate", False),
        "redaction": (record.get("metadata") or {}).get("redaction"),
        "cut": (record.get("local") or {}).get(metalimits.NOTES) or [],
    }


def render(report: dict) -> str:
    lines = [f"Config:   {report['config_file']}", f"State:    {report['state_dir']}"]
    lines += _render_login(report["login"])
    lines += _render_project(report["project"])
    lines += _render_hooks(report["hooks"])
    lines += _render_git_hook(report.get("git_hook"))
    lines += _render_queue(report["queue"], report["uploader_running"])
    lines += _render_recent(report["recent"])
    lines += _render_cut([*report["queue"], *report["recent"]])
    lines.append(f"Log:      {report['log_file']}")
    verdict = "works" if not report["problems"] else "would not work: " + "; ".join(report["problems"])
    lines.append(f"Capture:  {verdict}")
    return "\n".join(lines)


def _render_login(login: dict) -> list[str]:
    if not login["server"]:
        return ["Server:   none — run `sessionledger login --server URL`"]
    if not login["token"]:
        state = "not logged in — run `sessionledger login`"
    elif login["verified"] is False:
        state = f"token refused by the server: {login.get('error')} — run `sessionledger login`"
    elif login["verified"]:
        state = "token accepted"
    else:
        state = f"cannot verify the token: {login.get('unreachable')}"
    return [f"Server:   {login['server']} ({state})"]


def _render_project(project: dict) -> list[str]:
    if project.get("slug"):
        note = f" — {project['problem']}" if project.get("problem") else ""
        return [f"Project:  {project['slug']} ({project.get('source')}){note}"]
    if project.get("problem"):
        return [f"Project:  unresolved: {project['problem']}"]
    return [f"Project:  from {project.get('source')}"]


def _git_hook(repo: gitrefs.Repo | None) -> dict | None:
    """The git post-commit hook of `init --git-hook` in this clone (None outside a repository)."""
    if repo is None:
        return None
    from sessionledger import githook, gitmeta

    try:
        path = os.path.join(githook.hooks_dir(repo.worktree), githook.NAME)
    except gitmeta.GitError:
        return None
    if not githook.is_ours(path):
        return {"path": path, "installed": False, "works": False}
    reached, problem = hookprobe.check_git_hook(path, repo.worktree)
    found = {"path": path, "installed": True, "works": reached is not None, "reached": reached}
    return found | ({"problem": problem} if problem else {})


def _render_git_hook(git_hook: dict | None) -> list[str]:
    if git_hook is None:
        return []
    if git_hook["installed"] and not git_hook.get("works", True):
        return [f"Git hook: {git_hook['path']} (post-commit) does not work: {git_hook.get('problem')}"]
    if git_hook["installed"]:
        reached = git_hook.get("reached") or {}
        client = f"reaches sessionledger {reached.get('version')} ({reached.get('executable')})"
        return [f"Git hook: {git_hook['path']} (post-commit: every agent's active sessions at each commit; {client})"]
    return [
        "Git hook: not installed — `sessionledger init --git-hook` captures Codex CLI, Gemini CLI and manual commits"
    ]


def _render_hooks(hooks: list[dict]) -> list[str]:
    if not hooks:
        return ["Hooks:    not installed — run `sessionledger init`"]
    lines = []
    for hook in hooks:
        lines.append(f"Hooks:    {hook['path']} ({hook['scope']}): {_hook_state(hook)}")
    return lines


def _hook_state(hook: dict) -> str:
    if hook.get("error"):
        return hook["error"]
    reached = hook.get("reached")
    if reached and reached.get("deferred"):
        return "reaches a client, which leaves the work to your personal hooks"
    if reached:
        return f"reach sessionledger {reached.get('version')} ({reached.get('executable')})"
    return f"do not work: {hook.get('problem')}"


def _render_queue(entries: list[dict], running: bool) -> list[str]:
    suffix = " (an uploader is running)" if running else ""
    if not entries:
        return [f"Queue:    empty{suffix}"]
    rows = [[e["what"], age(e["captured_at"]), _why(e) + _parts(e)] for e in entries]
    header = f"Queue:    {len(entries)} segment{'s' if len(entries) != 1 else ''} waiting{suffix}"
    return [header, _indent(table(rows, ["segment", "captured", "why it waits"]))]


def _why(entry: dict) -> str:
    text = WHY.get(entry["state"], entry["state"])
    if entry["state"] == queue.PENDING and entry["attempts"]:
        wait = max(0, int((entry["next_at"] or 0) - time.time()))
        text = f"{text} (try {entry['attempts']} failed; next in {wait}s)"
    return f"{text}: {short(entry['reason'], 100)}" if entry["reason"] else text


def _parts(entry: dict[str, Any]) -> str:
    upload = entry.get("upload")
    if not upload or entry["reason"]:  # the reason already says how far it got
        return ""
    return f" ({resumable.sent_of(upload['received_bytes'], upload['size'])} in parts)"


def _render_recent(recent: list[dict]) -> list[str]:
    if not recent:
        return ["Recent:   no captures uploaded yet"]
    rows = [[r["what"], age(r["sent_at"]), r["url"] or "-"] for r in recent]
    return ["Recent:", _indent(table(rows, ["segment", "uploaded", "link"]))]


def _render_cut(segments: list[dict]) -> list[str]:
    """Segments whose metadata was cut to the server's limits: uploaded all the same, not whole."""
    return [f"Cut:      {s['what']}: {'; '.join(s['cut'])} (the server's limits)" for s in segments if s.get("cut")]


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())

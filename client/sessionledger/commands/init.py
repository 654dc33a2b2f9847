"""`sessionledger init`: wire the hooks into Claude Code and bind this repository to a project.

Hooks are merged into `.claude/settings.json` (or `settings.local.json` with `--local`, or
`~/.claude/settings.json` with `--global`): other hooks and keys are kept as they are, ours are
added once and updated in place on later runs — running `init` twice changes nothing. A file
that is not valid JSON is refused, never overwritten.
"""

from __future__ import annotations

import argparse
import json
import os

from sessionledger import config as config_mod
from sessionledger import gitmeta, gitrefs, paths
from sessionledger.api import ApiError
from sessionledger.commands.common import CommandError, client, load_config
from sessionledger.fsutil import atomic_write

HOOK_COMMAND = "sessionledger hook"
# (Claude Code event, matcher, our sub-command): what `init` installs.
HOOKS = (
    ("PostToolUse", "Bash", "post-tool-use"),
    ("SessionStart", "startup|resume|clear|compact|fork", "session-start"),  # `fork`: 2.1.214+
    ("SessionEnd", None, "session-end"),  # every reason: `clear` → kind clear, others → end
)
TIMEOUT_SECONDS = 30


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("init", help="install the Claude Code hooks and bind this repository to a project")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--global", dest="global_", action="store_true", help="install in ~/.claude/settings.json")
    where.add_argument("--local", action="store_true", help="install in .claude/settings.local.json (not committed)")
    parser.add_argument("--project", help="project slug (default: resolved from the git remote)")
    parser.add_argument("--mcp", action="store_true", help="also register the MCP server in the repository's .mcp.json")
    parser.set_defaults(func=run)


def run(options: argparse.Namespace) -> int:
    repo = None if options.global_ else gitrefs.find_repo(os.getcwd())
    if repo is None and not options.global_:
        raise CommandError("not inside a git repository (use --global to install for every repository)")
    path = settings_path(repo.worktree if repo else None, local=options.local)
    changed = install_hooks(path)
    print(f"{'Installed' if changed else 'Already installed:'} hooks in {path}")
    if getattr(options, "mcp", False):
        _install_mcp(repo)
    if repo is not None:
        _bind_project(repo, options.project)
    return 0


def _install_mcp(repo: gitrefs.Repo | None) -> None:
    from sessionledger.commands import mcp_cmd

    if repo is None:
        raise CommandError("--mcp writes the repository's .mcp.json: run it inside the repository")
    mcp_path, changed = mcp_cmd.install_config(repo.worktree)
    print(f"{'Registered' if changed else 'Already registered:'} the MCP server in {mcp_path}")


def settings_path(worktree: str | None, *, local: bool = False) -> str:
    if worktree is None:
        return os.path.join(paths.claude_dir(), "settings.json")
    return os.path.join(worktree, ".claude", "settings.local.json" if local else "settings.json")


def install_hooks(path: str) -> bool:
    """Merge our hooks into the settings file; True when the file changed."""
    settings = read_json_object(path)
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise CommandError(f"{path}: `hooks` is not an object; fix it by hand first")
    before = json.dumps(hooks, sort_keys=True)
    for event, matcher, name in HOOKS:
        merge_hook(hooks, event, matcher, f"{HOOK_COMMAND} {name}")
    if json.dumps(hooks, sort_keys=True) == before and os.path.exists(path):
        return False
    atomic_write(path, (json.dumps(settings, indent=2, ensure_ascii=False) + "\n").encode(), mode=0o644)
    return True


def read_json_object(path: str) -> dict:
    """A JSON settings file as a dict ({} when absent); refuses to touch anything else."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return {}
    try:
        settings = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise CommandError(f"{path} is not valid JSON ({exc}); not touching it") from None
    if not isinstance(settings, dict):
        raise CommandError(f"{path} does not hold a JSON object; not touching it")
    return settings


def merge_hook(hooks: dict, event: str, matcher: str | None, command: str) -> None:
    """Ensure one handler running `command` under `event`; keep every other handler."""
    groups = hooks.setdefault(event, [])
    if not isinstance(groups, list):
        raise CommandError(f"hooks.{event} is not a list; fix it by hand first")
    handler = {"type": "command", "command": command, "timeout": TIMEOUT_SECONDS}
    for group in groups:
        for existing in group.get("hooks", []) if isinstance(group, dict) else []:
            if isinstance(existing, dict) and str(existing.get("command", "")).strip().endswith(command):
                existing.update(type="command", timeout=existing.get("timeout", TIMEOUT_SECONDS))
                return
    group = {"hooks": [handler]}
    if matcher is not None:
        group = {"matcher": matcher, **group}
    groups.append(group)


def _bind_project(repo: gitrefs.Repo, slug: str | None) -> None:
    """Remember remote → project in the config so uploads need no lookup."""
    remote = gitmeta.remote_url(repo.worktree)
    if not remote:
        print("This repository has no git remote; uploads need `--project` or SESSIONLEDGER_PROJECT.")
        return
    key = gitmeta.normalise_remote(remote)
    slug = slug or _lookup(remote, key)
    if slug:
        config = load_config()
        repos = {**(config_mod.read_file().get("repos") or {}), key: slug}
        config_mod.update_file(repos=repos)
        print(f"{key} → project {slug} on {config.server or '(no server yet)'}")


def _lookup(remote: str, key: str) -> str | None:
    config = load_config()
    if not config.server or not config.token:
        print("Not logged in yet: run `sessionledger login`, then `sessionledger init` again to bind a project.")
        return None
    try:
        found = client(config).get("/projects", {"repo": remote}) or []
    except ApiError as exc:
        print(f"Could not ask {config.server} for the project of {key}: {exc.message}")
        return None
    slugs = [p["slug"] for p in found if isinstance(p, dict)]
    if len(slugs) == 1:
        return slugs[0]
    if not slugs:
        print(f"No project of yours on {config.server} has the repository {key}.")
        print("Ask a project admin to set it (create_project --repo), or run `sessionledger init --project SLUG`.")
    else:
        print(f"Several projects match {key}: {', '.join(slugs)}; choose one with `--project`.")
    return None

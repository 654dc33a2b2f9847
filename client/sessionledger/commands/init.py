"""`sessionledger init`: wire the hooks into Claude Code and bind this repository to a project.

Where the hooks go decides who they can hurt (docs/client.md "Hooks that never hurt a teammate"):

- default: `.claude/settings.local.json` — yours alone, kept out of git (`.git/info/exclude`),
  running this client by its absolute path;
- `--team`: the committed `.claude/settings.json`, with a guarded command that does nothing for
  a teammate who has no client;
- `--global`: `~/.claude/settings.json`, like the default but for every repository;
- `--agent gemini`: instead, Gemini CLI's hooks (AfterTool on run_shell_command, SessionEnd) in the
  project's `.gemini/settings.json` (guarded, like `--team`: the file is shared), or with
  `--global` in `~/.gemini/settings.json`;
- `--git-hook`: instead, the git `post-commit` hook of this repository (`githook`), which
  captures the active sessions of every agent (Claude Code, Codex CLI, Gemini CLI) at each
  commit, including commits made by hand; `--git-hook --remove` takes it out again.

Settings are merged: other hooks and keys are kept, ours are updated in place — running `init`
twice changes nothing. A file that is not valid JSON is refused, never overwritten. `init` says
what it chose and why.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess

from sessionledger import gitmeta, gitrefs, hookinstall, hookmarks, paths
from sessionledger.commands import mcp_cmd
from sessionledger.commands.common import CommandError, read_json_object
from sessionledger.fsutil import atomic_write

# The oldest Claude Code known to send PostToolUseFailure (anthropics/claude-code#27886 on 2.1.50).
# Before 2.1.101 an event name Claude Code does not know made it ignore the whole settings file.
FAILURE_HOOK_SINCE = (2, 1, 50)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("init", help="install the Claude Code hooks and bind this repository to a project")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--team", action="store_true", help="guarded hooks in the committed .claude/settings.json")
    where.add_argument("--global", dest="global_", action="store_true", help="install in ~/.claude/settings.json")
    where.add_argument("--local", action="store_true", help=argparse.SUPPRESS)  # the default; kept for scripts
    parser.add_argument("--project", help="project slug (default: resolved from the git remote); remembered per repo")
    parser.add_argument("--no-failure-hook", action="store_true", help="do not register PostToolUseFailure")
    parser.add_argument("--mcp", action="store_true", help="also register the MCP server in the repository's .mcp.json")
    parser.add_argument(
        "--git-hook",
        action="store_true",
        help="install the git post-commit hook that captures every agent's active sessions at each commit",
    )
    parser.add_argument("--remove", action="store_true", help="with --git-hook: remove it (and restore a chained hook)")
    parser.add_argument(
        "--agent",
        choices=["claude-code", "codex", "gemini"],
        default="claude-code",
        help="whose hooks to install (default claude-code; codex: use --git-hook)",
    )
    parser.set_defaults(func=run)


def run(options: argparse.Namespace) -> int:
    if getattr(options, "git_hook", False):
        return _git_hook(options)
    if getattr(options, "remove", False):
        raise CommandError("--remove goes with --git-hook (Claude Code's hooks: edit .claude/settings*.json)")
    if getattr(options, "agent", "claude-code") != "claude-code":
        return _agent_hooks(options)
    repo = None if options.global_ else gitrefs.find_repo(os.getcwd())
    if repo is None and not options.global_:
        raise CommandError("not inside a git repository (use --global to install for every repository)")
    events = _events(options)
    if options.team:
        _install_team(repo.worktree, events)  # type: ignore[union-attr]
    else:
        _install_personal(repo.worktree if repo else None, events)
    if getattr(options, "mcp", False):
        _install_mcp(repo)
    if repo is not None:
        from sessionledger.commands.bind import bind_project

        bind_project(repo, options.project)
    return 0


def _git_hook(options: argparse.Namespace) -> int:
    from sessionledger import githook

    if options.team or options.global_:
        raise CommandError("--git-hook is per repository: run it inside each one (not with --team or --global)")
    repo = gitrefs.find_repo(os.getcwd())
    if repo is None:
        raise CommandError("not inside a git repository")
    if options.remove:
        path, restored = githook.remove(repo.worktree)
        if path is None:
            print(f"No sessionledger post-commit hook in {githook.hooks_dir(repo.worktree)}: nothing to remove.")
        else:
            print(f"Removed the post-commit hook {path}{' and put back the hook it chained' if restored else ''}.")
        return 0
    try:
        done = githook.install(repo.worktree, hookinstall.client_command())
    except (OSError, gitmeta.GitError) as exc:
        raise CommandError(f"cannot install the post-commit hook: {exc}") from None
    print(f"{'Installed' if done.changed else 'Already installed:'} the git post-commit hook {done.path}.")
    print("  At each commit it captures this working tree's active sessions of Claude Code, Codex CLI and")
    print("  Gemini CLI (written to in the last two hours), also for commits you make by hand.")
    if done.chained:
        print(f"  The hook that was there runs first, as before: {done.chained}")
    if not done.path.startswith(os.path.join(repo.git_dir, "")) and done.path.startswith(repo.worktree):
        print("  core.hooksPath is inside the repository: if it is committed, teammates without the client")
        print("  run it too; it then does nothing.")
    print("  Claude Code's own hooks (`sessionledger init`) also capture the result of its commit call.")
    from sessionledger.commands.bind import bind_project

    bind_project(repo, options.project)
    return 0


def _agent_hooks(options: argparse.Namespace) -> int:
    """Another agent's own tool hooks, through its adapter (`hook_settings`, `merge_hooks`)."""
    import json

    from sessionledger import agents

    agent = agents.get(options.agent)
    repo = None if options.global_ else gitrefs.find_repo(os.getcwd())
    if repo is None and not options.global_:
        raise CommandError("not inside a git repository (use --global to install for every repository)")
    path = agent.hook_settings(repo.worktree if repo else None)
    if path is None:
        raise CommandError(
            f"init does not install {agent.display_name}'s hooks: `sessionledger init --git-hook` captures its "
            "sessions at every commit (docs/agents.md)"
        )
    settings = read_json_object(path)
    client = hookinstall.client_command()
    personal = repo is None
    command_for = (lambda name: hookinstall.personal_command(name, client)) if personal else hookinstall.team_command
    before = json.dumps(settings.get("hooks"), sort_keys=True)
    try:
        agent.merge_hooks(settings, command_for)
    except hookmarks.SettingsError as exc:
        raise CommandError(f"{path}: {exc}") from None
    changed = json.dumps(settings.get("hooks"), sort_keys=True) != before or not os.path.exists(path)
    if changed:
        atomic_write(path, (json.dumps(settings, indent=2, ensure_ascii=False) + "\n").encode(), mode=0o644)
    events = ", ".join(agent.hook_events)
    print(f"{'Installed' if changed else 'Already installed:'} {agent.display_name} hooks ({events}) in {path}.")
    if not personal:
        print("  They run `sessionledger` only when it is on PATH (the file is shared: commit it for the team).")
    user = agent.hook_settings(None)
    for source in dict.fromkeys([path, user]):
        off = agent.hooks_off(read_json_object(str(source))) if source and os.path.exists(source) else None
        if off:
            print(f"  Warning: {source}: {off}.")
    if repo is not None:
        from sessionledger.commands.bind import bind_project

        bind_project(repo, options.project)
    return 0


def settings_path(worktree: str | None, *, local: bool = False) -> str:
    if worktree is None:
        return os.path.join(paths.claude_dir(), "settings.json")
    return os.path.join(worktree, ".claude", "settings.local.json" if local else "settings.json")


def write_settings(path: str, settings: dict, command_for: object, events: tuple) -> bool:
    """Merge our hooks (and drop a failure hook that is not wanted); True when the file changed."""
    import json

    before = json.dumps(settings.get("hooks"), sort_keys=True)
    try:
        hookinstall.merge(settings, command_for, events=events)
        if not any(e[0] == hookinstall.FAILURE_EVENT for e in events):
            hookinstall.remove_event(settings, hookinstall.FAILURE_EVENT)
    except hookmarks.SettingsError as exc:
        raise CommandError(f"{path}: {exc}") from None
    if json.dumps(settings.get("hooks"), sort_keys=True) == before and os.path.exists(path):
        return False
    atomic_write(path, (json.dumps(settings, indent=2, ensure_ascii=False) + "\n").encode(), mode=0o644)
    return True


def _install_personal(worktree: str | None, events: tuple) -> None:
    path = settings_path(worktree, local=True) if worktree else settings_path(None)
    client = hookinstall.client_command()
    command_for = lambda name: hookinstall.personal_command(name, client)  # noqa: E731
    changed = write_settings(path, read_json_object(path), command_for, events)
    scope = "for you, in every repository" if worktree is None else "for you alone; not committed"
    print(f"{'Installed' if changed else 'Already installed:'} hooks in {path} ({scope}).")
    print(f"  They run this client by its absolute path: {client}")
    print("  so capture works even where `sessionledger` is not on the PATH Claude Code gives hooks.")
    if worktree is not None:
        _keep_out_of_git(worktree, path)
        _guard_committed(worktree)
        print("  Teammates are not affected. For the whole team: `sessionledger init --team` (guarded hooks).")


def _install_team(worktree: str, events: tuple) -> None:
    path = settings_path(worktree)
    changed = write_settings(path, read_json_object(path), hookinstall.team_command, events)
    print(f"{'Installed' if changed else 'Already installed:'} guarded hooks in {path} (committed: for the team).")
    print("  Each runs `sessionledger` only when it is on PATH and otherwise exits 0 silently,")
    print("  so a teammate without the client sees no hook error (POSIX sh; on Windows, Git Bash).")
    print("  Commit the file. If you also have personal hooks, those run instead (nothing runs twice).")
    found = shutil.which("sessionledger")
    if found is None:
        print("  Note: `sessionledger` is not on your PATH, so these hooks skip you: run `sessionledger init` too.")


def _guard_committed(worktree: str) -> None:
    """Hooks an older `init` committed unguarded break teammates without the client: guard them."""
    path = settings_path(worktree)
    try:
        settings = hookinstall.read_settings(path)
    except hookmarks.SettingsError:
        return
    bare = [h for _, h in hookinstall.handlers(settings) if not hookinstall.is_guarded(str(h.get("command")))]
    if not bare:
        return
    for handler in bare:
        handler["command"] = hookinstall.team_command(hookmarks.our_event(handler["command"]) or "")
    import json

    atomic_write(path, (json.dumps(settings, indent=2, ensure_ascii=False) + "\n").encode(), mode=0o644)
    print(f"  Guarded {len(bare)} unguarded sessionledger hook(s) an earlier `init` wrote into {path}:")
    print("  teammates without the client got a hook error after every Bash call. Commit that change.")


def _keep_out_of_git(worktree: str, path: str) -> None:
    """settings.local.json is personal: make sure git ignores it (in .git/info/exclude, uncommitted)."""
    relative = os.path.relpath(path, worktree)
    if _ignored(worktree, relative):
        return
    exclude = gitmeta.git(worktree, "rev-parse", "--git-path", "info/exclude").strip()
    exclude = exclude if os.path.isabs(exclude) else os.path.join(worktree, exclude)
    os.makedirs(os.path.dirname(exclude), exist_ok=True)
    with open(exclude, "a", encoding="utf-8") as handle:
        handle.write(f"\n# personal Claude Code settings (sessionledger init)\n/{relative}\n")
    print(f"  Added /{relative} to {exclude} so git ignores it.")


def _ignored(worktree: str, relative: str) -> bool:
    result = subprocess.run(["git", "check-ignore", "-q", relative], cwd=worktree, capture_output=True, check=False)
    return result.returncode == 0


def _events(options: argparse.Namespace) -> tuple:
    """Every hook, less PostToolUseFailure when refused or when this Claude Code predates it."""
    if options.no_failure_hook:
        return tuple(e for e in hookinstall.HOOKS if e[0] != hookinstall.FAILURE_EVENT)
    version = claude_version()
    if version is not None and version < FAILURE_HOOK_SINCE:
        shown = ".".join(map(str, version))
        print(f"Claude Code {shown} predates PostToolUseFailure: not registering it (upgrade, then run init again).")
        return tuple(e for e in hookinstall.HOOKS if e[0] != hookinstall.FAILURE_EVENT)
    return hookinstall.HOOKS


def claude_version() -> tuple[int, ...] | None:
    """`claude --version` as numbers; None when Claude Code is not on PATH or says nothing usable."""
    claude = shutil.which("claude")
    if claude is None:
        return None
    try:
        out = subprocess.run([claude, "--version"], capture_output=True, text=True, timeout=10, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", out)
    return tuple(int(part) for part in match.groups()) if match else None


def _install_mcp(repo: gitrefs.Repo | None) -> None:
    if repo is None:
        raise CommandError("--mcp writes the repository's .mcp.json: run it inside the repository")
    mcp_path, changed = mcp_cmd.install_config(repo.worktree)
    print(f"{'Registered' if changed else 'Already registered:'} the MCP server in {mcp_path}")

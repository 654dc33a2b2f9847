"""PostToolUse and PostToolUseFailure (Bash), Gemini CLI's AfterTool (run_shell_command): capture
the segment when HEAD moved to a new commit; `bd close` → task.

PostToolUse fires only when a tool succeeds: `git commit -m x && make lint` that fails at lint
fires PostToolUseFailure instead, with the same `tool_input` and an `error` string in place of
`tool_response` (docs/client.md "Claude Code behaviour we rely on"). Both run this handler.

Fast path, on every Bash call: find the repositories the command may have touched (the working
directory's, plus any named by `git -C <dir>` or `cd <dir>`), read their HEAD from files and
compare with the last observation. Nothing moved → return, having imported nothing beyond
`os` and read three small files. Only then does `checkpoint` take the state lock.

Tasks are looked at first: in `bd close X && git commit …` the task's span ends before the
commit that covers its work, and the commit's checkpoint is captured right after.
"""

from __future__ import annotations

import itertools
import os

from sessionledger import gitrefs, observe


def handle(payload: dict) -> None:
    if payload.get("tool_name") != "Bash" and not _other_agents_shell(payload):
        return
    cwd = str(payload.get("cwd") or os.getcwd())
    command = _command(payload)
    captured = False
    if "bd " in command:
        from sessionledger import tasks

        captured = tasks.from_bash(payload, command, cwd)
    links: list[tuple[str, str]] = []  # (transcript, commit) of each checkpoint queued
    for repo in repos_touched(cwd, command):
        captured = _check(payload, repo, links) or captured
    if captured:
        from sessionledger.checkpoint import link_tasks
        from sessionledger.spawn import start_uploader

        start_uploader(link_tasks(links))


def _other_agents_shell(payload: dict) -> bool:
    """Gemini CLI's AfterTool (and Codex's PostToolUse) name their shell tools their own way:
    the agent whose transcript it is says (Claude Code's `Bash` never gets here)."""
    from sessionledger import agents

    agent = agents.for_transcript(str(payload.get("transcript_path") or ""))
    return payload.get("tool_name") in agent.shell_tools


def _command(payload: dict) -> str:
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    return command if isinstance(command, str) else ""


def _check(payload: dict, repo: gitrefs.Repo, links: list[tuple[str, str]]) -> bool:
    sha, ref = gitrefs.read_head(repo)
    if sha is None and gitrefs.uses_reftable(repo):
        from sessionledger.gitmeta import head

        sha, ref = head(repo.worktree)[0], None
    if sha is None or sha == observe.seen(repo.git_dir):
        return False
    from sessionledger import checkpoint

    return checkpoint.on_head_moved(payload, repo, sha, gitrefs.branch_name(ref), links)


def repos_touched(cwd: str, command: str) -> list[gitrefs.Repo]:
    """The working directory's repository and those named by `-C <dir>` / `cd <dir>`."""
    found: dict[str, gitrefs.Repo] = {}
    for directory in [cwd, *_named_dirs(cwd, command)]:
        repo = gitrefs.find_repo(directory)
        if repo is not None:
            found.setdefault(repo.git_dir, repo)
    return list(found.values())


def _named_dirs(cwd: str, command: str) -> list[str]:
    if "-C" not in command and "cd " not in command:
        return []
    tokens = command.replace(";", " ").replace("&&", " ").replace("||", " ").split()
    dirs = []
    for flag, value in itertools.pairwise(tokens):
        if flag in ("-C", "cd", "pushd"):
            path = os.path.expanduser(value.strip("'\""))
            dirs.append(os.path.join(cwd, path))
    return dirs

"""Facts about commits that need git itself (message, diff stat, patch id, ancestry).

Called from the detached uploader (and from commands), never on the hook's fast path: a commit
hash names immutable content, so its facts can be collected after the hook has exited.
"""

from __future__ import annotations

import os
import subprocess

_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
TIMEOUT = 60


class GitError(RuntimeError):
    pass


def git(cwd: str, *args: str, stdin: bytes | None = None, check: bool = True) -> str:
    """Run git in `cwd` and return stdout (decoded, undecodable bytes replaced)."""
    result = _run(cwd, args, stdin)
    if check and result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"git {' '.join(args)}: {message}")
    return result.stdout.decode("utf-8", "replace")


def _run(cwd: str, args: tuple[str, ...], stdin: bytes | None) -> subprocess.CompletedProcess[bytes]:
    command = ["git", "--no-pager", "-c", "core.quotepath=off", "-c", "color.ui=false", *args]
    try:
        return subprocess.run(
            command, cwd=cwd, input=stdin, capture_output=True, timeout=TIMEOUT, env={**os.environ, **_ENV}
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {' '.join(args)}: {exc}") from None


def head(cwd: str) -> tuple[str | None, str]:
    """(HEAD commit or None when unborn, branch name or "") through git itself (reftable repos)."""
    sha = git(cwd, "rev-parse", "--verify", "--quiet", "HEAD", check=False).strip() or None
    branch = git(cwd, "symbolic-ref", "--quiet", "--short", "HEAD", check=False).strip()
    return sha, branch


def commit_time(cwd: str, sha: str) -> float | None:
    text = git(cwd, "log", "-1", "--format=%ct", sha, check=False).strip()
    return float(text) if text.isdigit() else None


def commit_facts(cwd: str, sha: str) -> dict:
    """commit_message, diff_stat, files_touched and patch_id as the ingest metadata names them."""
    numstat = git(cwd, "diff-tree", "-r", "--root", "-m", "--first-parent", "--no-renames", "--numstat", sha)
    stat, files = parse_numstat(numstat)
    return {
        "commit_message": git(cwd, "log", "-1", "--format=%B", sha).rstrip("\n"),
        "diff_stat": stat,
        "files_touched": files,
        "patch_id": patch_id(cwd, sha),
    }


def parse_numstat(text: str) -> tuple[dict[str, int], list[str]]:
    """`<ins>\\t<del>\\t<path>` lines (`-` for binary files) → totals and the paths."""
    insertions = deletions = 0
    files: list[str] = []
    for line in text.splitlines():
        parts = line.split("\t", 2)
        if len(parts) != 3:
            continue  # the commit id line diff-tree prints first
        added, removed, path = parts
        insertions += int(added) if added.isdigit() else 0
        deletions += int(removed) if removed.isdigit() else 0
        files.append(path)
    return {"files": len(files), "insertions": insertions, "deletions": deletions}, files


def patch_id(cwd: str, sha: str) -> str:
    """`git patch-id --stable` of the commit's diff: survives a rebase or a squash (docs/design.md §2)."""
    diff = _run(cwd, ("diff-tree", "-p", "--root", "-m", "--first-parent", sha), None)
    if diff.returncode != 0 or not diff.stdout.strip():
        return ""
    out = git(cwd, "patch-id", "--stable", stdin=diff.stdout, check=False).split()
    return out[0] if out and len(out[0]) == 40 else ""


def parents(cwd: str, sha: str) -> list[str]:
    return git(cwd, "rev-list", "--parents", "-n", "1", sha).split()[1:]


def is_ancestor(cwd: str, older: str, newer: str) -> bool:
    return _run(cwd, ("merge-base", "--is-ancestor", older, newer), None).returncode == 0


def amended(cwd: str, new: str, old: str | None) -> str | None:
    """`old` when `new` replaced it (git commit --amend): same parents, and old not an ancestor."""
    if not old or old == new:
        return None
    try:
        same_parents = parents(cwd, new) == parents(cwd, old)
    except GitError:
        return None
    return old if same_parents and not is_ancestor(cwd, old, new) else None


def remote_url(cwd: str) -> str | None:
    """`origin`'s URL, else the first remote's."""
    url = git(cwd, "config", "--get", "remote.origin.url", check=False).strip()
    if url:
        return url
    remotes = git(cwd, "remote", check=False).split()
    if not remotes:
        return None
    return git(cwd, "config", "--get", f"remote.{remotes[0]}.url", check=False).strip() or None

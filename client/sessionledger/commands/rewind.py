"""`sessionledger rewind <commit> | --at STEP [--session REF] [--dry-run]`: put the working tree's
files back as they were at a checkpoint, or at any step of a captured conversation (a turn, a
commit, a prompt or tool call from `turns --steps`: the code of the commit captured there or
the nearest one before it), reporting files changed, insertions and deletions.

HEAD and the branch stay where they are: the rewind shows up as staged changes (`git diff
--staged`), to commit or to undo with `git restore --staged --worktree .`. Tracked files are
restored byte for byte (and files added since are removed); untracked files are left alone unless
the checkpoint has a file at the same path. Uncommitted changes would be lost, so a working tree
that has any is refused unless `--force`; `--dry-run` says so too, and exits 1.
"""

from __future__ import annotations

import argparse
import os
import sys

from sessionledger import gitmeta
from sessionledger.commands.common import CommandError, terminal_safe


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("rewind", help="restore the working tree's files to a checkpoint or a step")
    parser.add_argument("commit", nargs="?", help="the checkpoint: a commit (any git revision) or a message uuid")
    parser.add_argument("--at", metavar="STEP", help="a step of the conversation: turn number, commit or message id")
    parser.add_argument("--session", help="with --at: the commit, session or agent session (default: HEAD's)")
    parser.add_argument("--project", help="project slug (default: from the git remote)")
    parser.add_argument("--dry-run", action="store_true", help="only report what would change")
    parser.add_argument("--force", action="store_true", help="discard uncommitted changes")
    parser.set_defaults(func=run)


def run(options: argparse.Namespace) -> int:
    root = _repo_root()
    sha = _target(root, options)
    changes = _changes(root, sha)
    subject = gitmeta.git(root, "log", "-1", "--format=%h %s", sha).strip()
    if not changes:
        print(f"The working tree already matches {subject}: nothing to rewind.")
        return 0
    if options.dry_run:
        print(f"Rewinding to {subject} would change:")
        print(_listing(changes))
        print(_summary(changes, "would be changed"))
        return _dry_run_verdict(root, sha, options.force)
    if not options.force:
        _refuse_if_dirty(root, sha)
    try:
        gitmeta.git(root, "restore", f"--source={sha}", "--staged", "--worktree", "--", ":/")
    except gitmeta.GitError as exc:
        raise CommandError(f"git could not restore the files: {str(exc).splitlines()[-1]}") from None
    print(f"Rewound the working tree to {subject}:")
    print(_listing(changes))
    print(_summary(changes, "changed"))
    print("HEAD did not move; review with `git diff --staged`, undo with `git restore --staged --worktree :/`.")
    return 0


def _repo_root() -> str:
    try:
        return gitmeta.git(os.getcwd(), "rev-parse", "--show-toplevel").strip()
    except gitmeta.GitError:
        raise CommandError("not inside a git repository") from None


def _target(root: str, options: argparse.Namespace) -> str:
    """The commit to rewind to: the argument itself, or the code at a step."""
    if options.at is None and not options.commit:
        raise CommandError("name a commit, or a step with --at (see `sessionledger turns --steps`)")
    if options.at is None:
        text = gitmeta.git(root, "rev-parse", "--verify", "--quiet", f"{options.commit}^{{commit}}", check=False)
        if text.strip():
            return text.strip()
        if not _looks_like_message(options.commit):
            raise CommandError(f"no commit {options.commit} in this repository")
    return _step_code(root, options.at or options.commit, options.session, options.project)


def _looks_like_message(text: str) -> bool:
    """A whole message uuid (a shorter id could be a commit prefix too: that takes `--at`)."""
    from sessionledger.commands.agentsessions import UUID

    return bool(UUID.match(text))


def _step_code(root: str, at: str, session: str | None, project: str | None) -> str:
    from sessionledger.commands import agentsessions
    from sessionledger.commands.turns import open_target

    ctx = open_target(session, project)
    agent = agentsessions.load(ctx.api, ctx.slug, ctx.target.agent_session_id, allow_gaps=True)
    point = agentsessions.find_step(agent, at)
    if isinstance(point, agentsessions.Turn):
        sha = agentsessions.checkpoint_commit(point, root, ctx.target.relinked)
        print(f"End of turn {point.number}: the code is at {sha[:10]}.")
        return sha
    sha = agentsessions.step_commit(point, root, ctx.target.relinked)
    print(terminal_safe(f"Step {point.short} ({point.kind}: {point.label[:60]}): the code is at {sha[:10]}."))
    return sha


Change = tuple[str, str, int | None, int | None]  # status, path, insertions, deletions (None: binary)


def _changes(root: str, sha: str) -> list[Change]:
    """What restoring `sha` does to the working tree: the diff from the tree as it is to `sha`."""
    numstat = gitmeta.git(root, "diff", "-R", "--no-renames", "--numstat", "-z", sha, "--", ":/")
    status = gitmeta.git(root, "diff", "-R", "--no-renames", "--name-status", "-z", sha, "--", ":/")
    kinds = dict(_pairs(status.split("\0")))
    changes = []
    for entry in numstat.split("\0"):
        if not entry:
            continue
        added, removed, path = entry.split("\t", 2)
        changes.append((kinds.get(path, "M"), path, _int(added), _int(removed)))
    return changes


def _pairs(fields: list[str]) -> list[tuple[str, str]]:
    """`M\\0path\\0A\\0path…` from `--name-status -z` → (path, status)."""
    return [(fields[i + 1], fields[i]) for i in range(0, len(fields) - 1, 2) if fields[i]]


def _int(text: str) -> int | None:
    return int(text) if text.isdigit() else None


def _dry_run_verdict(root: str, sha: str, force: bool) -> int:
    """A dry run says whether the real rewind would go ahead: 1 (with the reason) if it would refuse."""
    if force:
        return 0
    try:
        _refuse_if_dirty(root, sha)
    except CommandError as exc:
        print(f"The rewind itself would refuse: {exc}.", file=sys.stderr)
        return 1
    return 0


def _refuse_if_dirty(root: str, sha: str) -> None:
    dirty = gitmeta.git(root, "status", "--porcelain", "--untracked-files=no").strip()
    if dirty:
        count = len(dirty.splitlines())
        raise CommandError(f"{count} uncommitted change(s) would be lost: commit or stash them first, or pass --force")
    untracked = set(gitmeta.git(root, "ls-files", "--others", "--exclude-standard", "-z").split("\0")) - {""}
    wanted = set(gitmeta.git(root, "ls-tree", "-r", "--name-only", "-z", sha).split("\0"))
    clash = sorted(untracked & wanted)
    if clash:
        raise CommandError(
            f"untracked file {clash[0]}{f' (and {len(clash) - 1} more)' if len(clash) > 1 else ''} "
            "would be overwritten by the checkpoint's version: move it away, or pass --force"
        )


def _listing(changes: list[Change]) -> str:
    words = {"A": "add", "D": "delete", "M": "modify", "T": "modify"}
    lines = []
    for status, path, added, removed in changes:
        counts = "binary" if added is None else f"+{added} -{removed}"
        lines.append(f"  {words.get(status, 'modify'):<7} {path}  ({counts})")
    return "\n".join(lines)


def _summary(changes: list[Change], verb: str) -> str:
    insertions = sum(c[2] or 0 for c in changes)
    deletions = sum(c[3] or 0 for c in changes)
    files = len(changes)
    return (
        f"{files} file{'s' * (files != 1)} {verb}, "
        f"{insertions} insertion{'s' * (insertions != 1)}(+), {deletions} deletion{'s' * (deletions != 1)}(-)"
    )

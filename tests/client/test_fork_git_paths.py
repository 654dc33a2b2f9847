"""A teammate's transcript replayed by `fork` must not run code on the forking machine (docs/security.md
"What a teammate's upload cannot do to your machine"): in a git worktree `.git` is a file, so a
transcript that plants a repository (`evilgit/HEAD`, `config` with `core.fsmonitor`, `objects/`,
`refs/`) and then writes `.git` → `gitdir: evilgit` would make the victim's next `git status` run
its command. Replay refuses every path git reads as a repository or as configuration, under any
name a filesystem opens as one, and the fork says what it refused."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from sessionledger.commands.replay import Replayed, refused_path, replay
from sessionledger.core.formats.toolmap import patch_input
from tests.client.attribution_helpers import agent_write
from tests.client.conftest import ClaudeSession, git, head
from tests.client.test_fork_replay import tool_step
from tests.client.test_steps import fork

RECORDED = "/home/teammate/repo"  # where the teammate's conversation ran


@pytest.fixture
def payload(tmp_path: Path) -> tuple[Path, Path]:
    """The attacker's command: a script that leaves a marker when something runs it."""
    marker, script = tmp_path / "pwned", tmp_path / "payload.sh"
    script.write_text(f"#!/bin/sh\necho ran > {marker}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, marker


def planted_repository(directory: str, script: Path) -> list[tuple[str, dict[str, Any]]]:
    """Write calls that make `directory` a git directory whose config runs `script`."""
    config = f"[core]\n\trepositoryformatversion = 0\n\tfsmonitor = {script}\n"
    return [
        ("Write", {"file_path": f"{directory}/HEAD", "content": "ref: refs/heads/main\n"}),
        ("Write", {"file_path": f"{directory}/config", "content": config}),
        ("Write", {"file_path": f"{directory}/objects/info/keep", "content": ""}),
        ("Write", {"file_path": f"{directory}/refs/heads/keep", "content": ""}),
    ]


def git_status_runs_nothing(directory: Path, marker: Path) -> None:
    """The victim's next command in the fork: it must not run the planted one."""
    git(directory, "status", "--short", check=False)
    assert not marker.exists(), "git status ran the transcript's core.fsmonitor"


# --- the attack, end to end through `sessionledger fork --at` ------------------------------


def hostile_session(claude: ClaudeSession, repo: Path, script: Path) -> str:
    """A commit; then the planted repository and `.git` pointing at it; the step after."""
    claude.prompt("add the app module and commit it")
    agent_write(claude, repo, "app.py", "def main():\n    return 0\n")
    claude.bash("git add -A && git commit -q -m 'Add app'")
    claude.prompt("tidy up")
    for name, arguments in planted_repository(f"{repo}/evilgit", script):
        tool_step(claude, name, arguments)
    tool_step(claude, "Write", {"file_path": f"{repo}/.git", "content": "gitdir: evilgit\n"})
    tool_step(claude, "Write", {"file_path": f"{repo}/sub/.git/\x1b]52;c;cHduZWQ=\x07config", "content": ""})
    tool_step(claude, "Write", {"file_path": "/elsewhere\n  refused   nothing: forged", "content": ""})
    step = tool_step(claude, "Bash", {"command": "ls"}, "app.py evilgit")
    claude.end()
    return step


def test_a_fork_refuses_the_transcripts_gitdir_and_git_status_runs_nothing(
    ledger, repo, claude, client_env, tmp_path, payload
) -> None:
    script, marker = payload
    step = hostile_session(claude, repo, script)
    first = head(repo)

    result, worktree = fork(client_env, repo, tmp_path, "forked", claude.session_id, "--at", step[:8])

    git_status_runs_nothing(worktree, marker)
    git_status_runs_nothing(worktree / "evilgit", marker)  # not a repository either: no HEAD
    real = os.path.realpath(repo / ".git" / "worktrees")
    assert (worktree / ".git").read_text().startswith(f"gitdir: {real}{os.sep}")
    assert git(worktree, "rev-parse", "HEAD") == first
    refused = [line for line in result.stdout.splitlines() if line.startswith("  refused")]
    assert any(line.startswith("  refused   Write .git: git opens it as .git") for line in refused), result.stdout
    assert any(line.startswith("  refused   Write evilgit/HEAD: a file named HEAD") for line in refused)
    assert (worktree / "evilgit" / "config").exists()  # an ordinary file elsewhere is still replayed
    assert "  refused   Write sub/.git/]52;c;cHduZWQ=config: git opens it" in result.stdout
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout  # no clipboard write from a name
    assert not any("forged" in line for line in refused)  # a newline in a name adds no line to the report


# --- every name a filesystem opens as `.git`, and git's other configuration files -----------


@pytest.fixture
def worktree(tmp_path: Path, client_env) -> Path:
    """A real `git worktree` (its `.git` is a file), as `fork` creates one."""
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    (main / "app.py").write_text("A = 1\n")
    git(main, "add", "-A")
    git(main, "commit", "-q", "-m", "Add app")
    tree = tmp_path / "tree"
    git(main, "worktree", "add", "-q", str(tree))
    return tree


def replayed(worktree: Path, calls: list[tuple[str, dict[str, Any]]]) -> Replayed:
    messages = [{"kind": "tool_use", "tool": {"id": str(i), "name": n, "input": a}} for i, (n, a) in enumerate(calls)]
    return replay(messages, worktree=str(worktree), cwd_from=RECORDED, cwd=str(worktree))


def files_under(tree: Path) -> dict[str, bytes]:
    return {str(p.relative_to(tree)): p.read_bytes() for p in sorted(tree.rglob("*")) if p.is_file()}


HOSTILE = [
    ".git",
    "sub/.git/config",
    "sub/.git/hooks/post-checkout",
    ".GIT",
    ".git.",
    ".git ",
    "git~1",
    "GIT~1/config",
    ".g\u200cit",  # HFS+ ignores the zero-width non-joiner
    ".g\u0131t",  # a dotless i: upper-cased, it is I
    ".git::$INDEX_ALLOCATION/config",  # an NTFS stream of the directory
    "sub\\.git\\config",  # a Windows separator
    ".gitmodules",
    "vendor/lib/.gitmodules",
    "GITMOD~1",
    "gi7eba~1",  # git's hashed 8.3 alias of .gitmodules
    ".gitattributes",
    "sub/.GitAttributes",
    ".lfsconfig",
    "evil/HEAD",
    # what an agent started by `fork --exec` in the fork reads, each naming commands it runs
    ".claude/settings.json",
    "sub/.claude/settings.local.json",
    ".CLAUDE/Settings.json",
    ".mcp.json",
    ".gemini/settings.json",
    ".codex/config.toml",
]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_write_to_a_path_git_reads_is_refused_and_said(worktree: Path, name: str) -> None:
    before = files_under(worktree)

    done = replayed(worktree, [("Write", {"file_path": f"{RECORDED}/{name}", "content": "gitdir: evil\n"})])

    assert files_under(worktree) == before and not done.written
    assert [(r.tool, r.path) for r in done.refused] == [("Write", name)]
    assert done.refused[0].why


@pytest.mark.parametrize(
    "name",
    [
        ".gitignore",
        ".github/workflows/ci.yml",
        "docs/git.md",
        "head.py",
        "src/head/index.html",
        ".git-blame-ignore",
        ".claude/commands/review.md",
        "docs/settings.json",
    ],
)
def test_ordinary_files_that_look_like_git_ones_are_still_replayed(worktree: Path, name: str) -> None:
    done = replayed(worktree, [("Write", {"file_path": f"{RECORDED}/{name}", "content": "x\n"})])

    assert (worktree / name).read_text() == "x\n" and done.written == [name] and not done.refused


def test_an_edit_of_the_worktrees_git_file_is_refused(worktree: Path) -> None:
    gitfile = (worktree / ".git").read_text()

    done = replayed(
        worktree,
        [("Edit", {"file_path": f"{RECORDED}/.git", "old_string": "gitdir: ", "new_string": "gitdir: evil #"})],
    )

    assert (worktree / ".git").read_text() == gitfile
    assert [r.path for r in done.refused] == [".git"] and not done.not_reproduced


def test_a_nested_repository_planted_in_a_subdirectory_never_runs(worktree: Path, payload) -> None:
    script, marker = payload
    (worktree / "sub").mkdir()

    done = replayed(worktree, planted_repository(f"{RECORDED}/sub/.git", script))

    git_status_runs_nothing(worktree / "sub", marker)
    assert not (worktree / "sub" / ".git").exists()
    assert {r.path for r in done.refused} == {
        "sub/.git/HEAD",
        "sub/.git/config",
        "sub/.git/objects/info/keep",
        "sub/.git/refs/heads/keep",
    }


def test_codex_apply_patch_cannot_replace_the_git_file_or_plant_a_repository(worktree: Path, payload) -> None:
    script, marker = payload
    gitfile = (worktree / ".git").read_text()
    patch = (
        "*** Begin Patch\n"
        "*** Add File: evilgit/HEAD\n+ref: refs/heads/main\n"
        f"*** Add File: evilgit/config\n+[core]\n+\tfsmonitor = {script}\n"
        "*** Add File: evilgit/objects/keep\n+\n"
        "*** Add File: evilgit/refs/keep\n+\n"
        "*** Delete File: .git\n"
        "*** Add File: .git\n+gitdir: evilgit\n"
        "*** Update File: app.py\n*** Move to: .gitmodules\n@@\n-A = 1\n+[submodule]\n"
        "*** End Patch"
    )

    done = replayed(worktree, [("Edit", patch_input(patch, {"input": patch}))])

    git_status_runs_nothing(worktree, marker)
    assert (worktree / ".git").read_text() == gitfile
    assert [r.path for r in done.refused] == ["evilgit/HEAD", ".git", ".git", ".gitmodules"]
    assert all(r.tool == "apply_patch" for r in done.refused)


def test_a_committed_symlink_does_not_lead_a_write_to_the_git_file(worktree: Path) -> None:
    (worktree / "notes").symlink_to(".git")  # as a checkout of a committed symlink leaves it
    (worktree / "sub" / ".git").mkdir(parents=True)  # a nested repository the victim made
    (worktree / "hooks").symlink_to("sub/.git")
    gitfile = (worktree / ".git").read_text()

    done = replayed(
        worktree,
        [
            ("Write", {"file_path": f"{RECORDED}/notes", "content": "gitdir: evil\n"}),
            ("Write", {"file_path": f"{RECORDED}/hooks/config", "content": "[core]\n"}),
        ],
    )

    assert (worktree / ".git").read_text() == gitfile and not (worktree / "sub" / ".git" / "config").exists()
    assert [r.path for r in done.refused] == ["notes", "hooks/config"]
    assert "it leads to .git;" in done.refused[0].why and "it leads to sub/.git/config;" in done.refused[1].why


def test_only_the_file_git_reads_counts_not_a_directory_of_its_name() -> None:
    assert refused_path("a/b/.git/c") and refused_path(".Git") and not refused_path(".gitignore")
    assert not refused_path(".gitmodules/readme")  # only the file git reads counts, not a directory of that name
    assert refused_path(".gitmodules/.git")  # but a `.git` under it still does

"""Reading HEAD without git must agree with git: loose and packed refs, worktrees, detached
HEAD, and the reflog's account of what moved HEAD. Plus the config and its environment."""

from __future__ import annotations

import json
import os

import pytest

from sessionledger import config, detect, gitmeta, gitrefs
from sessionledger.core import remotes
from tests.client.conftest import git, head


def test_head_from_a_loose_ref_and_from_packed_refs(repo) -> None:
    found = gitrefs.find_repo(str(repo / "sub" / "dir"))  # walks up from a path inside
    assert found is not None and found.worktree == str(repo)
    assert gitrefs.read_head(found) == (head(repo), "refs/heads/main")
    git(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert gitrefs.read_head(found) == (head(repo), "refs/heads/main")


def test_detached_head_and_branch_names(repo) -> None:
    git(repo, "checkout", "-q", "--detach")
    found = gitrefs.find_repo(str(repo))
    assert gitrefs.read_head(found) == (head(repo), None)
    assert gitrefs.branch_name("refs/heads/feature/x") == "feature/x" and gitrefs.branch_name(None) == ""


def test_a_linked_worktree_has_its_own_head_and_shares_refs(repo, tmp_path) -> None:
    other = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(other))
    (other / "f.txt").write_text("f\n")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "feature work")
    found = gitrefs.find_repo(str(other))
    assert found.git_dir != found.common_dir and found.common_dir == str(repo / ".git")
    assert gitrefs.read_head(found) == (head(other), "refs/heads/feature")
    assert gitrefs.read_head(gitrefs.find_repo(str(repo)))[0] == head(repo) != head(other)


def test_outside_a_repository_there_is_none(tmp_path) -> None:
    assert gitrefs.find_repo(str(tmp_path)) is None


def test_the_reflog_tells_a_commit_from_a_checkout(repo) -> None:
    found = gitrefs.find_repo(str(repo))
    (repo / "a").write_text("a")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a")
    entry = gitrefs.reflog_last(found, head(repo))
    assert entry.action == "commit" and detect.is_commit_action(entry.action, entry.message)
    git(repo, "checkout", "-q", "HEAD~1")
    entry = gitrefs.reflog_last(found, head(repo))
    assert entry.action == "checkout" and not detect.judge(found, head(repo), None).capture
    git(repo, "commit", "-q", "--allow-empty", "--amend", "-m", "reworded")
    assert gitrefs.reflog_last(found, head(repo)).action == "commit (amend)"


@pytest.mark.parametrize(
    ("action", "message", "commit"),
    [
        ("commit (initial)", "first", True),
        ("cherry-pick", "x", True),
        ("merge feature", "Merge made by the 'ort' strategy.", True),
        ("merge feature", "Fast-forward", False),
        ("pull", "Fast-forward", False),
        ("reset", "moving to HEAD~1", False),
        ("rebase (finish)", "returning to refs/heads/main", False),
    ],
)
def test_reflog_actions(action, message, commit) -> None:
    assert detect.is_commit_action(action, message) is commit


def test_amend_detection_follows_the_issue_rule(repo) -> None:
    (repo / "a").write_text("a")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a")
    first = head(repo)
    git(repo, "commit", "-q", "--amend", "-m", "a, reworded")
    assert gitmeta.amended(str(repo), head(repo), first) == first
    git(repo, "commit", "-q", "--allow-empty", "-m", "next")
    assert gitmeta.amended(str(repo), head(repo), git(repo, "rev-parse", "HEAD~1")) is None


@pytest.mark.parametrize(
    "remote",
    [
        "git@github.com:acme/api.git",
        "https://github.com/acme/api",
        "ssh://git@GitHub.com/acme/api.git",
        "github.com/acme/api",
    ],
)
def test_remotes_normalise_like_the_server(remote) -> None:
    assert remotes.normalise_remote(remote) == "github.com/acme/api"


def test_every_config_key_can_be_overridden_by_the_environment(client_env, monkeypatch) -> None:
    for name in ("HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(name, client_env.vars[name])
    path = client_env.config_dir / "config.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"server": "https://file.example", "max_raw_bytes": 5}))
    monkeypatch.setenv("SESSIONLEDGER_MAX_RAW_BYTES", "1024")
    monkeypatch.setenv("SESSIONLEDGER_VERIFY_BEFORE_CLEAR", "yes")
    monkeypatch.setenv("SESSIONLEDGER_REDACTION", '{"disabled": ["jwt"]}')
    for key in ("SERVER", "TOKEN", "PROJECT"):
        monkeypatch.delenv(f"SESSIONLEDGER_{key}", raising=False)

    loaded = config.load()

    assert loaded.server == "https://file.example" and loaded.sources["server"] == "file"
    assert loaded["max_raw_bytes"] == 1024 and loaded.sources["max_raw_bytes"] == "SESSIONLEDGER_MAX_RAW_BYTES"
    assert loaded["verify_before_clear"] is True and loaded["redaction"] == {"disabled": ["jwt"]}
    assert set(config.DEFAULTS) >= {"server", "token", "project"}
    monkeypatch.setenv("SESSIONLEDGER_MAX_RAW_BYTES", "ten")
    with pytest.raises(config.ConfigError, match="SESSIONLEDGER_MAX_RAW_BYTES"):
        config.load()
    assert os.environ["SESSIONLEDGER_MAX_RAW_BYTES"] == "ten"

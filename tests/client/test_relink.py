"""`relink` after a real `git rebase` / squash: the new hashes resolve to the old commits' sessions."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.client.conftest import ClaudeSession, ClientEnv, Ledger, git, head

pytestmark = pytest.mark.django_db(transaction=True)


def feature_work(repo: Path, claude: ClaudeSession, env: ClientEnv) -> list[str]:
    """Two captured commits on `feature`, then `main` moves on: the branch needs a rebase."""
    git(repo, "checkout", "-q", "-b", "feature", env=env.env())
    made = []
    for name in ("a", "b"):
        claude.prompt(f"add {name}")
        (repo / f"{name}.py").write_text(f"{name.upper()} = 1\n")
        claude.bash(f"git add -A && git commit -q -m 'Add {name}'")
        made.append(head(repo))
    git(repo, "checkout", "-q", "main", env=env.env())
    (repo / "main.txt").write_text("upstream work\n")
    git(repo, "add", "-A", env=env.env())
    git(repo, "commit", "-q", "-m", "Upstream", env=env.env())
    git(repo, "checkout", "-q", "feature", env=env.env())
    return made


def sessions_of(ledger: Ledger, sha: str) -> list[str]:
    response = ledger.api.get(f"/api/v1/projects/{ledger.slug}/commits/{sha}")
    assert response.status_code == 200, response.content
    return [s["commit_hash"] for s in response.json()["results"]]


def test_relink_after_a_rebase_resolves_the_new_hashes_to_the_old_sessions(ledger, repo, claude, client_env) -> None:
    old = feature_work(repo, claude, client_env)
    git(repo, "rebase", "-q", "main", env=client_env.env())
    new = git(repo, "rev-list", "--reverse", "main..HEAD").split()
    assert len(new) == 2 and set(new).isdisjoint(old) and sessions_of(ledger, new[0]) == []

    result = client_env.cli("relink", cwd=repo)

    assert result.returncode == 0, result.stderr
    assert f"{old[0][:10]} → {new[0][:10]}  (patch id)" in result.stdout
    assert "Relinked 2 pair(s)" in result.stdout
    assert sessions_of(ledger, new[0]) == [old[0]] and sessions_of(ledger, new[1][:8]) == [old[1]]
    shown = client_env.cli("show", new[1][:10], cwd=repo)
    assert shown.returncode == 0 and old[1] in shown.stdout
    again = client_env.cli("relink", cwd=repo)
    assert "Relinked 0 pair(s) (2 already linked)" in again.stdout


def test_relink_after_a_squash_links_every_squashed_commit(ledger, repo, claude, client_env) -> None:
    old = feature_work(repo, claude, client_env)
    git(repo, "rebase", "-q", "main", env=client_env.env())
    rebased = git(repo, "rev-list", "--reverse", "main..HEAD").split()
    client_env.cli("relink", cwd=repo)
    git(repo, "reset", "-q", "--soft", "main", env=client_env.env())
    git(repo, "commit", "-q", "-m", "Add a and b", env=client_env.env())
    squashed = head(repo)

    result = client_env.cli("relink", cwd=repo)

    assert result.returncode == 0, result.stderr
    assert "(squash of 2)" in result.stdout
    assert sorted(sessions_of(ledger, squashed)) == sorted(old)
    assert rebased  # the intermediate hashes were relinked first: a chain of rewrites still resolves


def test_relink_uses_the_patch_ids_the_server_stored_when_the_old_commits_are_gone(
    ledger, repo, claude, client_env
) -> None:
    old = feature_work(repo, claude, client_env)
    git(repo, "rebase", "-q", "main", env=client_env.env())
    git(repo, "update-ref", "-d", "ORIG_HEAD", env=client_env.env())
    git(repo, "reflog", "expire", "--expire=now", "--all", env=client_env.env())
    new = git(repo, "rev-list", "--reverse", "main..HEAD").split()

    result = client_env.cli("relink", "main..HEAD", cwd=repo)

    assert result.returncode == 0, result.stderr
    assert sessions_of(ledger, new[0]) == [old[0]] and sessions_of(ledger, new[1]) == [old[1]]


def test_relink_dry_run_sends_nothing_and_bad_ranges_fail_clearly(ledger, repo, claude, client_env) -> None:
    old = feature_work(repo, claude, client_env)
    git(repo, "rebase", "-q", "main", env=client_env.env())
    dry = client_env.cli("relink", "--dry-run", cwd=repo)
    assert dry.returncode == 0 and "--dry-run: nothing sent" in dry.stdout
    assert sessions_of(ledger, head(repo)) == []
    bad = client_env.cli("relink", "nope..HEAD", cwd=repo)
    assert bad.returncode == 1 and "not a revision range" in bad.stderr and len(bad.stderr.splitlines()) == 1
    assert old


def test_fork_of_a_rebased_commit_checks_out_the_new_hash(ledger, repo, claude, client_env, tmp_path) -> None:
    feature_work(repo, claude, client_env)
    git(repo, "rebase", "-q", "main", env=client_env.env())
    assert client_env.cli("relink", cwd=repo).returncode == 0
    rebased = head(repo)

    result = client_env.cli("fork", rebased[:10], "--worktree", str(tmp_path / "wt"), cwd=repo)

    assert result.returncode == 0, result.stderr
    assert "in turn 2 of 2" in result.stdout and head(tmp_path / "wt") == rebased

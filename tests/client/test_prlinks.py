"""`pr-links`: Markdown for a pull request, each commit with its sessions; `--gh` posts it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from django_scopes import scopes_disabled

from sessions_app.models import Session
from tests.client.conftest import ClaudeSession, ClientEnv, Ledger, git, head

pytestmark = pytest.mark.django_db(transaction=True)

HOSTILE = "Fix [this](https://evil.example) | now <img src=x> @alice `rm` **bold**"


def branch_with_sessions(repo: Path, claude: ClaudeSession, env: ClientEnv, ledger: Ledger) -> list[str]:
    git(repo, "checkout", "-q", "-b", "feature", env=env.env())
    made = []
    for name in ("a", "b"):
        claude.prompt(f"add {name}")
        (repo / f"{name}.py").write_text("x = 1\n")
        claude.bash(f"git add -A && git commit -q -m 'Add {name}'")
        made.append(head(repo))
    (repo / "manual.txt").write_text("by hand\n")
    git(repo, "add", "-A", env=env.env())
    git(repo, "commit", "-q", "-m", "Tweak by hand", env=env.env())
    made.append(head(repo))
    with scopes_disabled():
        Session.objects.filter(commit_hash=made[0]).update(title=HOSTILE, turn_count=3)
    return made


def test_pr_links_lists_each_commit_with_its_session_links(ledger, repo, claude, client_env) -> None:
    a, b, manual = branch_with_sessions(repo, claude, client_env, ledger)
    result = client_env.cli("pr-links", cwd=repo)  # default: main..HEAD

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("### Sessionledger") and "2 of 3 commits have captured sessions." in lines
    rows = [line for line in lines if line.startswith("| [`") or line.startswith("|  |")]
    assert [row.split("`")[1] for row in rows] == [a[:8], b[:8], manual[:8]]
    session_a = ledger.session_for(a)
    assert f"(http://testserver/p/acme-api/c/{a})" in rows[0]
    assert f"(http://testserver/p/acme-api/s/{session_a.pk})" in rows[0]
    assert rows[0].endswith("| 3 | mallory |")
    assert "_no captured session_" in rows[2]
    # the title is transcript text: it must not become a link, HTML, code or a mention
    assert "\\[this\\]\\(https://evil.example\\)" in rows[0] and "\\<img src=x\\>" in rows[0]
    assert "\\| now" in rows[0] and "@\u2060alice" in rows[0] and "\\`rm\\`" in rows[0]


def test_pr_links_gh_posts_the_comment_and_needs_gh(ledger, repo, claude, client_env, tmp_path) -> None:
    branch_with_sessions(repo, claude, client_env, ledger)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(shutil.which("git"), bin_dir / "git")

    missing = client_env.cli("pr-links", "--gh", cwd=repo, PATH=str(bin_dir))
    assert missing.returncode == 1 and "--gh needs the GitHub CLI" in missing.stderr

    gh = bin_dir / "gh"
    gh.write_text(
        f'#!/bin/sh\necho "$@" > {tmp_path}/gh-args\ncat > {tmp_path}/gh-body\necho https://github.com/acme/acme-api/pull/7#issuecomment-1\n'
    )
    gh.chmod(0o755)
    path = os.pathsep.join([str(bin_dir), os.environ["PATH"]])
    posted = client_env.cli("pr-links", "main..HEAD", "--gh", "--pr", "7", cwd=repo, PATH=path)
    assert posted.returncode == 0, posted.stderr
    assert "issuecomment-1" in posted.stdout
    assert (tmp_path / "gh-args").read_text().split() == ["pr", "comment", "7", "--body-file", "-"]
    assert (tmp_path / "gh-body").read_text().startswith("### Sessionledger")


def test_pr_links_fails_clearly_on_an_empty_or_bad_range(ledger, repo, client_env) -> None:
    empty = client_env.cli("pr-links", "HEAD..HEAD", cwd=repo)
    assert empty.returncode == 1 and empty.stderr.strip() == "sessionledger: no commits in HEAD..HEAD"
    bad = client_env.cli("pr-links", "nope..HEAD", cwd=repo)
    assert bad.returncode == 1 and "not a revision range" in bad.stderr

"""`sessionledger pr-links [BASE..HEAD]`: Markdown for a pull-request comment — each commit of the
range with the sessions behind it (title, turns, author) — printed, or posted with `--gh`.

Commits are looked up with `GET …/commits/{sha}`, which follows relinks, so a rebased branch
still finds its sessions once `relink` has run. Transcript text (session titles are the first
prompt) is untrusted in a PR comment: it is escaped so it cannot add links, images, HTML or
@-mentions.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
from typing import Any

from sessionledger import gitmeta
from sessionledger.api import ApiError, Client
from sessionledger.commands.common import (
    CommandError,
    api_error,
    client,
    load_config,
    project_for_cwd,
    short,
    terminal_safe,
)

MAX_COMMITS = 250
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()<>#+!|~])")
HEADER = "### Sessionledger: the conversations behind this pull request"


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("pr-links", help="Markdown for a PR comment: each commit with its session links")
    parser.add_argument("range", nargs="?", help="BASE..HEAD (default: the default branch..HEAD)")
    parser.add_argument("--gh", action="store_true", help="post it on the current branch's PR with `gh pr comment`")
    parser.add_argument("--pr", help="with --gh: the PR number or URL (default: the current branch's)")
    parser.add_argument(
        "--update", action="store_true", help="with --gh: edit this command's earlier comment instead of adding one"
    )
    parser.add_argument("--ai-share", action="store_true", help="add each commit's share of lines the agent wrote")
    parser.add_argument("--project", help="project slug (default: from the git remote)")
    parser.set_defaults(func=run)


def run(options: argparse.Namespace) -> int:
    gh = shutil.which("gh") if options.gh else None
    if options.gh and not gh:
        raise CommandError("--gh needs the GitHub CLI (`gh`, https://cli.github.com); or paste the Markdown yourself")
    root = _root()
    config = load_config()
    api = client(config)
    slug = project_for_cwd(config, api, options.project)
    revision = options.range or f"{_default_base(root)}..HEAD"
    commits = _commits(root, revision)
    if not commits:
        raise CommandError(f"no commits in {revision}")
    try:
        found = [(commit, _sessions(api, slug, commit[0])) for commit in commits]
        shares = _ai_shares(api, slug, found) if options.ai_share else None
    except ApiError as exc:
        raise api_error(exc) from None
    markdown = terminal_safe(render(found, _site(config.server, found), slug, shares))
    if gh and options.update:
        from sessionledger.commands.prcomment import update

        return update(gh, options.pr, markdown, root, HEADER)
    if gh:
        return _post(gh, options.pr, markdown, root)
    print(markdown)
    return 0


def _root() -> str:
    try:
        return gitmeta.git(os.getcwd(), "rev-parse", "--show-toplevel").strip()
    except gitmeta.GitError:
        raise CommandError("not inside a git repository") from None


def _default_base(root: str) -> str:
    """origin's default branch, else main or master."""
    head = gitmeta.git(root, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD", check=False).strip()
    candidates = [head] if head else []
    candidates += ["origin/main", "origin/master", "main", "master"]
    for name in candidates:
        if gitmeta.git(root, "rev-parse", "--verify", "--quiet", name, check=False).strip():
            return name
    raise CommandError("cannot tell the pull request's base branch: give a range such as main..HEAD")


def _commits(root: str, revision: str) -> list[tuple[str, str]]:
    """(sha, subject), oldest first."""
    try:
        out = gitmeta.git(root, "log", "--reverse", f"--max-count={MAX_COMMITS}", "--format=%H%x00%s", revision, "--")
    except gitmeta.GitError:
        raise CommandError(f"not a revision range git understands: {revision}") from None
    return [tuple(line.split("\0", 1)) for line in out.splitlines() if "\0" in line]  # type: ignore[misc]


def _sessions(api: Client, slug: str, sha: str) -> list[dict[str, Any]]:
    results = api.get(f"/projects/{slug}/commits/{sha}").get("results", [])
    order = {"checkpoint": 0, "task": 1, "manual": 2, "clear": 3, "end": 4}
    return sorted(results, key=lambda s: (order.get(s.get("kind"), 9), s.get("created_at") or ""))


def _site(server: str, found: list) -> str:
    """The web origin: from a session's web_url (the server knows its public URL), else the API's."""
    for _, sessions in found:
        for session in sessions:
            url = session.get("web_url") or ""
            if "/p/" in url:
                return url.split("/p/", 1)[0]
    return server.rstrip("/")


def escape(text: str) -> str:
    """Text safe inside a Markdown table cell: no markup, links, HTML, mentions or line breaks."""
    text = " ".join((text or "").split())
    text = _MARKDOWN.sub(r"\\\1", text)
    return text.replace("@", "@\u2060")


def render(found: list, site: str, slug: str, shares: dict[str, tuple[int, int]] | None = None) -> str:
    with_sessions = sum(1 for _, sessions in found if sessions)
    lines = [
        HEADER,
        "",
        f"{with_sessions} of {len(found)} commit{'s' * (len(found) != 1)} have captured sessions.",
    ]
    if shares is not None:
        lines += ["", _share_summary(shares)]
    extra = (" AI-written lines |", "---|") if shares is not None else ("", "")
    lines += ["", f"| commit | session | turns | author |{extra[0]}", f"|---|---|---|---|{extra[1]}"]
    for (sha, subject), sessions in found:
        commit = f"[`{sha[:8]}`]({site}/p/{slug}/c/{sha}) {escape(short(subject, 70))}"
        share = f" {_share_cell(shares.get(sha))} |" if shares is not None else ""
        if not sessions:
            lines.append(f"| {commit} | _no captured session_ | | |{share}")
            continue
        for n, session in enumerate(sessions):
            cells = [commit if n == 0 else "", _session_cell(session), str(session.get("turn_count") or 0)]
            lines.append(f"| {' | '.join(cells)} | {_author(session)} |{share if n == 0 else ' |' * bool(share)}")
    return "\n".join(lines) + "\n"


def _ai_shares(api: Client, slug: str, found: list) -> dict[str, tuple[int, int]]:
    """(lines the agent wrote, lines added) per commit with sessions, from its attribution records."""
    shares = {}
    for (sha, _), sessions in found:
        if not sessions:
            continue
        records = api.get(f"/projects/{slug}/commits/{sha}/attribution").get("records") or []
        totals = [(r.get("metadata") or {}).get("dev.sessionledger") or {} for r in records]
        added = sum(int(t.get("added_lines") or 0) for t in totals)
        if records:
            shares[sha] = (sum(int(t.get("ai_lines") or 0) for t in totals), added)
    return shares


def _share_cell(share: tuple[int, int] | None) -> str:
    if share is None:
        return "–"
    ai, added = share
    return f"{ai} of {added} ({round(100 * ai / added)}%)" if added else "0 of 0"


def _share_summary(shares: dict[str, tuple[int, int]]) -> str:
    ai, added = sum(s[0] for s in shares.values()), sum(s[1] for s in shares.values())
    if not added:
        return "No attributed lines in these commits."
    return f"The agent wrote {ai} of the {added} lines added by attributed commits ({round(100 * ai / added)}%)."


def _session_cell(session: dict[str, Any]) -> str:
    fallback = "the conversation after the last commit" if session.get("kind") in ("end", "clear") else "untitled"
    title = escape(short(session.get("title") or session.get("commit_message") or fallback, 70))
    kind = session.get("kind") or ""
    label = f"{title} ({kind})" if kind and kind != "checkpoint" else title
    return f"[{label}]({session.get('web_url')})"


def _author(session: dict[str, Any]) -> str:
    email = (session.get("author") or {}).get("email") or ""
    return escape(email.split("@", 1)[0]) if email else "-"


def _post(gh: str, pr: str | None, markdown: str, root: str) -> int:
    command = [gh, "pr", "comment", *([pr] if pr else []), "--body-file", "-"]
    result = subprocess.run(command, input=markdown, text=True, capture_output=True, cwd=root, check=False)
    if result.returncode != 0:
        reason = (result.stderr or result.stdout).strip().splitlines()
        raise CommandError(f"gh pr comment failed: {reason[-1] if reason else f'exit {result.returncode}'}")
    print(result.stdout.strip() or "Posted the comment.")
    return 0

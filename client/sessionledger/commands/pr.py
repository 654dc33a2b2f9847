"""`sessionledger pr [NUMBER]`: the conversations behind a pull request — the current branch's, or
PR NUMBER — with its AI share and cost, as the server's PR page knows them.

One or two requests: `GET …/pulls?head=BRANCH` finds the branch's PR (an open one first), then
`GET …/pulls/{number}` answers the rest. Everything printed comes from the server — titles are a
teammate's prompts, branch names and PR titles a forge's — so it goes through `terminal_safe`.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from sessionledger import gitmeta
from sessionledger.api import ApiError
from sessionledger.commands.common import (
    CommandError,
    api_error,
    client,
    load_config,
    print_json,
    project_for_cwd,
    short,
    terminal_safe,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("pr", help="the conversations behind the current branch's pull request (or PR NUMBER)")
    parser.add_argument("number", nargs="?", type=_number, help="the pull request's number (default: the branch's)")
    parser.add_argument("--project", help="project slug (default: from the git remote)")
    parser.add_argument("--json", action="store_true", help="print the API's JSON")
    parser.set_defaults(func=run)


def _number(value: str) -> int:
    text = value.strip().lstrip("#")
    if not text.isdigit() or not 0 < int(text) < 10**9:
        raise argparse.ArgumentTypeError(f"not a pull request number: {value!r}")
    return int(text)


def run(options: argparse.Namespace) -> int:
    config = load_config()
    api = client(config)
    slug = project_for_cwd(config, api, options.project)
    number = options.number
    try:
        if number is None:
            branch = current_branch()
            found = api.get(f"/projects/{slug}/pulls", {"head": branch}).get("results") or []
            if not found:
                raise CommandError(f"no pull request known for branch {terminal_safe(branch)} in {slug}")
            number = int(found[0]["number"])
        pr = api.get(f"/projects/{slug}/pulls/{number}")
    except ApiError as exc:
        if exc.status == 404:
            raise CommandError(f"no pull request #{number} in {slug}") from None
        raise api_error(exc) from None
    if options.json:
        print_json(pr)
    else:
        print(terminal_safe(render(pr)))
    return 0


def current_branch() -> str:
    try:
        branch = gitmeta.git(os.getcwd(), "rev-parse", "--abbrev-ref", "HEAD").strip()
    except gitmeta.GitError:
        raise CommandError("not inside a git repository: give the pull request's number") from None
    if branch in ("", "HEAD"):
        raise CommandError("HEAD is detached: give the pull request's number")
    return branch


def render(pr: dict[str, Any]) -> str:
    """The PR as lines of text (made terminal-safe by the caller)."""
    share = pr.get("ai_share") or {}
    added, ai = int(share.get("added_lines") or 0), int(share.get("ai_lines") or 0)
    lines = [
        f"#{pr.get('number')} {short(pr.get('title'), 100)}  ({pr.get('state')})",
        f"{pr.get('repository')}  {pr.get('head_ref')} -> {pr.get('base_ref')}  by {pr.get('author')}",
        str(pr.get("web_url") or ""),
        "",
        _share_line(added, ai, share),
        _usage_line(pr.get("usage") or {}),
    ]
    conversations = pr.get("conversations") or []
    lines += ["", f"Conversations ({len(conversations)}):" if conversations else "No captured conversation yet."]
    for conversation in conversations:
        sessions = conversation.get("sessions") or []
        author = str((sessions[0].get("author") or {}).get("email") or "-") if sessions else "-"
        lines.append(f"  {short(conversation.get('title') or 'untitled', 70)}  ({author.split('@', 1)[0]})")
        lines.append(f"    {conversation.get('web_url')}")
        commits = conversation.get("commits") or []
        held = [str(c.get("sha"))[:8] for c in commits if c.get("still_in_pr")]
        gone = [str(c.get("sha"))[:8] for c in commits if not c.get("still_in_pr")]
        detail = f"    commits: {' '.join(held) or '-'}"
        lines.append(detail + (f"  (no longer in the PR: {' '.join(gone)})" if gone else ""))
    return "\n".join(lines)


def _share_line(added: int, ai: int, share: dict[str, Any]) -> str:
    if not added:
        return "AI share: no attributed lines yet"
    human, unknown = int(share.get("human_lines") or 0), int(share.get("unknown_lines") or 0)
    share_text = f"{ai} of {added} added lines by the agent ({round(100 * ai / added)}%)"
    return f"AI share: {share_text}, human {human}, unknown {unknown}"


def _usage_line(usage: dict[str, Any]) -> str:
    keys = ("input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens")
    tokens = sum(int(usage.get(k) or 0) for k in keys)
    if not tokens:
        return "Cost: no token counts recorded"
    cost = float(usage.get("cost_usd") or 0)
    priced = f"${cost:,.2f}" + (" + unpriced" if usage.get("unpriced_tokens") else "")
    return f"Cost: {priced} estimated, {tokens:,} tokens"

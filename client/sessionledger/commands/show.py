"""`sessionledger show <session id | commit>`: one session's metadata, summary and links."""

from __future__ import annotations

import argparse

from sessionledger.api import ApiError, Client
from sessionledger.commands.common import (
    CommandError,
    api_error,
    client,
    load_config,
    print_json,
    project_for_cwd,
    terminal_safe,
)

_HEX = set("0123456789abcdef")


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("show", help="show a session (by id) or the sessions of a commit (sha, ≥ 7 hex)")
    parser.add_argument("ref", help="session id (UUID) or commit hash / prefix")
    parser.add_argument("--project", help="project slug (default: from the git remote)")
    parser.add_argument("--json", action="store_true", help="print the API's JSON")
    parser.set_defaults(func=run)


def run(options: argparse.Namespace) -> int:
    config = load_config()
    api = client(config)
    slug = project_for_cwd(config, api, options.project)
    try:
        sessions = fetch(api, slug, options.ref.strip().lower())
    except ApiError as exc:
        if exc.status == 404:
            raise CommandError(f"no session {options.ref} in {slug}") from None
        raise api_error(exc) from None
    if options.json:
        print_json(sessions[0] if len(sessions) == 1 else sessions)
    else:
        print(terminal_safe("\n\n".join(render(s) for s in sessions)))
    return 0


def fetch(api: Client, slug: str, ref: str) -> list[dict]:
    """A UUID is a session; hex of 7-40 characters is a commit (possibly several sessions)."""
    if len(ref) == 36 and ref.count("-") == 4:
        return [api.get(f"/projects/{slug}/sessions/{ref}")]
    if 7 <= len(ref) <= 40 and set(ref) <= _HEX:
        found = api.get(f"/projects/{slug}/commits/{ref}").get("results", [])
        if not found:
            raise CommandError(f"no session for commit {ref} in {slug}")
        return found
    raise CommandError("give a session id (UUID) or a commit hash of at least 7 hex characters")


def render(session: dict) -> str:
    stat = session.get("diff_stat") or {}
    author = (session.get("author") or {}).get("email", "-")
    lines = [
        f"Session  {session['id']}  ({session.get('kind')}, {session.get('status')})",
        f"Title    {session.get('title') or '-'}",
        f"Commit   {session.get('commit_hash') or '-'}  branch {session.get('feature_branch') or '-'}",
    ]
    if session.get("task_id"):
        lines.append(f"Task     {session['task_id']}")
    lines += [
        f"Author   {author}   captured {session.get('captured_at') or '-'}",
        f"Size     {session.get('message_count')} messages, {session.get('turn_count')} turns, "
        f"{session.get('raw_size_bytes')} bytes; diff {stat.get('files', 0)} files "
        f"+{stat.get('insertions', 0)} -{stat.get('deletions', 0)}",
    ]
    if session.get("redaction"):
        lines.append("Redacted " + ", ".join(f"{k}×{v}" for k, v in sorted(session["redaction"].items())))
    if session.get("summary"):
        lines += ["", session["summary"].strip()]
    if session.get("error"):
        lines.append(f"Error    {session['error']}")
    lines += ["", f"Open     {session.get('web_url')}"]
    return "\n".join(lines)

"""`sessionledger blame FILE [-L a,b]`: `git blame` with, per line, who wrote it — the agent
(model and a short step reference: prompt index · message uuid) or a human.

Each distinct commit's Agent Trace records come from `GET …/commits/{sha}/attribution`, which
follows relinks, so a rebased or squashed line is found again by its hash. A commit with
sessions but no record (captured before attribution existed) is matched on the server against
its stored transcript: the client sends only its added lines' hashes (docs/attribution.md).
"""

from __future__ import annotations

import argparse
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from sessionledger import gitmeta
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
from sessionledger.core import attribution

UNCOMMITTED = "0" * 40
WORKERS = 8


@dataclass
class BlameLine:
    commit: str
    orig_line: int
    final_line: int
    path: str  # in the commit (git follows renames)
    text: str
    author: str = ""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("blame", help="git blame with, per line, AI or human, model and step")
    parser.add_argument("file")
    parser.add_argument("-L", dest="lines", metavar="A,B", help="only lines A to B")
    parser.add_argument("--json", action="store_true", help="one object per line")
    parser.add_argument("--project", help="project slug (default: from the git remote)")
    parser.set_defaults(func=run)


def run(options: argparse.Namespace) -> int:
    root = repo_root()
    lines = blame(root, options.file, options.lines)
    config = load_config()
    api = client(config)
    slug = project_for_cwd(config, api, options.project)
    try:
        records = records_by_commit(api, slug, root, lines)
    except ApiError as exc:
        raise api_error(exc) from None
    rows = [describe(line, records.get(line.commit)) for line in lines]
    if options.json:
        print_json(rows)
    else:
        sys.stdout.write("".join(_format(row) for row in rows))
    return 0


def repo_root() -> str:
    try:
        return gitmeta.git(os.getcwd(), "rev-parse", "--show-toplevel").strip()
    except gitmeta.GitError:
        raise CommandError("not inside a git repository") from None


def blame(root: str, path: str, span: str | None) -> list[BlameLine]:
    args = ["blame", "--porcelain"]
    if span:
        args += ["-L", span]
    try:
        out = gitmeta.git(os.getcwd(), *args, "--", path)
    except gitmeta.GitError as exc:
        raise CommandError(str(exc).split(": ", 1)[-1] or f"cannot blame {path}") from None
    return parse_porcelain(out)


def parse_porcelain(out: str) -> list[BlameLine]:
    found: list[BlameLine] = []
    paths: dict[str, str] = {}
    authors: dict[str, str] = {}
    current: BlameLine | None = None
    for row in out.split("\n"):
        if row.startswith("\t") and current is not None:
            current.text = row[1:]
            current.path = paths.get(current.commit, "")
            current.author = authors.get(current.commit, "")
            found.append(current)
            current = None
        elif current is None and len(row) > 41 and row[40] == " ":
            sha, orig, final = row.split(" ")[:3]
            current = BlameLine(sha, int(orig), int(final), "", "")
        elif current is not None and row.startswith("filename "):
            paths[current.commit] = row[len("filename ") :]
        elif current is not None and row.startswith("author "):
            authors[current.commit] = row[len("author ") :]
    return found


def records_by_commit(api: Client, slug: str, root: str, lines: list[BlameLine]) -> dict[str, list[dict]]:
    """Each committed commit's records (the transcript fallback where it has sessions but none)."""
    commits = sorted({line.commit for line in lines if line.commit != UNCOMMITTED})
    paths: dict[str, set[str]] = {}
    for line in lines:
        paths.setdefault(line.commit, set()).add(line.path)
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        answers = list(pool.map(lambda sha: _records(api, slug, root, sha, paths[sha]), commits))
    return dict(zip(commits, answers, strict=True))


def _records(api: Client, slug: str, root: str, sha: str, paths: set[str]) -> list[dict]:
    answer = api.get(f"/projects/{slug}/commits/{sha}/attribution")
    if answer.get("records") or not answer.get("sessions"):
        return list(answer.get("records") or [])
    files = [{"path": p, "lines": added_rows(root, sha, p)} for p in sorted(paths)]
    try:
        return [api.post_json(f"/projects/{slug}/commits/{sha}/attribution/match", {"files": files})]
    except ApiError as exc:
        if exc.status == 404:
            return []
        raise


def added_rows(root: str, sha: str, path: str) -> list[list[Any]]:
    """The commit's added lines of one file as the server's matching takes them: [n, hash, trivial]."""
    from sessionledger.attribution_capture import commit_diff

    added = attribution.added_lines(commit_diff(root, sha, path)).get(path, [])
    return [[line.number, line.hash, line.trivial] for line in added]


def describe(line: BlameLine, records: list[dict] | None) -> dict[str, Any]:
    from sessionledger.core.attribution_lookup import find

    row: dict[str, Any] = {
        "line": line.final_line,
        "commit": line.commit,
        "author": line.author,
        "path": line.path,
        "text": line.text,
        "contributor": "uncommitted" if line.commit == UNCOMMITTED else "unknown",
    }
    hit = find(records or [], line.path, line.orig_line, attribution.line_hash(line.text, line.path), line.commit)
    if hit is not None:
        row.update(contributor=hit.contributor, model=hit.model, step=hit.short_step, url=hit.url)
    return row


_LABEL = {"ai": "AI", "human": "human", "unknown": "?", "uncommitted": "-"}


def _format(row: dict[str, Any]) -> str:
    model = terminal_safe(row.get("model") or "").rsplit("/", 1)[-1][:22]  # records are a teammate's upload: untrusted
    label = terminal_safe(_LABEL.get(row["contributor"], row["contributor"]))[:8]
    step = terminal_safe(row.get("step") or "")[:13]
    return f"{row['commit'][:8]} {label:<5} {model:<22} {step:<13} {row['line']:>5}) {row['text']}\n"

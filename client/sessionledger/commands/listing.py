"""`sessionledger list`: the project's captured sessions, newest first (the query API, docs/design.md §4)."""

from __future__ import annotations

import argparse

from sessionledger.api import ApiError
from sessionledger.commands.common import (
    api_error,
    client,
    load_config,
    print_json,
    project_for_cwd,
    short,
    table,
    terminal_safe,
)
from sessionledger.core.listfilters import FILTER_NAMES, SESSION_FILTERS


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("list", help="list captured sessions of this repository's project")
    parser.add_argument("--project", help="project slug (default: from the git remote)")
    for spec in SESSION_FILTERS:
        parser.add_argument(f"--{spec.name}", help=spec.help, action="append" if spec.repeatable else "store")
    parser.add_argument("--limit", type=int, default=20, help="how many (≤ 200)")
    parser.add_argument("--json", action="store_true", help="print the API's JSON")
    parser.set_defaults(func=run)


def run(options: argparse.Namespace) -> int:
    config = load_config()
    api = client(config)
    slug = project_for_cwd(config, api, options.project)
    params = {name: getattr(options, name) for name in FILTER_NAMES}
    params["limit"] = max(1, min(200, options.limit))
    try:
        page = api.get(f"/projects/{slug}/sessions", params)
    except ApiError as exc:
        raise api_error(exc) from None
    if options.json:
        print_json(page)
    else:
        print(render(page.get("results", [])) or f"No sessions in {slug} match.")
    return 0


def render(sessions: list[dict]) -> str:
    if not sessions:
        return ""
    rows = [
        [
            s["id"][:8],
            (s.get("created_at") or "")[:16].replace("T", " "),
            s.get("kind", ""),
            s.get("task_id") or (s.get("commit_hash") or "")[:10],
            s.get("status", ""),
            str(s.get("turn_count", "")),
            short(s.get("title") or s.get("commit_message"), 60),
        ]
        for s in sessions
    ]
    rows = [[terminal_safe(str(cell)) for cell in row] for row in rows]  # before the widths are measured
    return table(rows, ["id", "created", "kind", "commit/task", "status", "turns", "title"])
